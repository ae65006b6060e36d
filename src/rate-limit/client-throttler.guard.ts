import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { clientIdOf } from '../auth/authenticated-client.js';
import { RateLimitedError } from './rate-limit.errors.js';

/**
 * Limits requests per authenticated client rather than per IP (many clients share a NAT, one client
 * runs many servers). Applied per route, so it runs after the global AuthGuard has named the client,
 * and before any interceptor: a replay counts like any other request.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    return clientIdOf(request as unknown as FastifyRequest);
  }

  /** The route and the client as they are (the library hashes them: a SHA-256 per request, for a key nobody reads). */
  protected override generateKey(context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${context.getClass().name}-${context.getHandler().name}-${throttlerName}-${tracker}`;
  }

  protected override async throwThrottlingException(_context: ExecutionContext, limit: ThrottlerLimitDetail): Promise<void> {
    throw new RateLimitedError(Math.max(1, limit.timeToBlockExpire));
  }
}
