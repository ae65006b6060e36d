import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/app-config.js';
import { ApiTokenVerifier } from './api-token-verifier.js';
import { UnauthenticatedError } from './auth.errors.js';
import { attachClientId } from './authenticated-client.js';
import { PUBLIC_ROUTE } from './public.decorator.js';

const BEARER = /^Bearer ([\x21-\x7e]+)$/i;

/** Authenticates every request by its bearer token, except routes marked `@Public()`. */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly verifier: ApiTokenVerifier;

  constructor(
    private readonly reflector: Reflector,
    config: ConfigService<AppConfig, true>,
  ) {
    this.verifier = new ApiTokenVerifier(config.get('apiClients', { infer: true }));
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()])) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
    const clientId = token === undefined ? undefined : this.verifier.clientIdFor(token);
    if (clientId === undefined) throw new UnauthenticatedError();
    attachClientId(request, clientId);
    return true;
  }
}
