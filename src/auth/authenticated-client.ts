import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

const CLIENT_ID = Symbol('auth:clientId');

interface AuthenticatedRequest extends FastifyRequest {
  [CLIENT_ID]?: string;
}

export function attachClientId(request: FastifyRequest, clientId: string): void {
  (request as AuthenticatedRequest)[CLIENT_ID] = clientId;
}

/** The authenticated client's id, or undefined before (or without) authentication: for logs. */
export function authenticatedClientIdOf(request: FastifyRequest): string | undefined {
  return (request as AuthenticatedRequest)[CLIENT_ID];
}

/** The id of the client `AuthGuard` authenticated; throws where no guard ran (a wiring bug). */
export function clientIdOf(request: FastifyRequest): string {
  const clientId = authenticatedClientIdOf(request);
  if (clientId === undefined) throw new Error('no authenticated client on this request');
  return clientId;
}

/** Injects the authenticated client's id. */
export const AuthenticatedClient = createParamDecorator((_data: unknown, context: ExecutionContext): string =>
  clientIdOf(context.switchToHttp().getRequest<FastifyRequest>()),
);

