import { applyDecorators, UseGuards } from '@nestjs/common';
import { ClientThrottlerGuard } from './client-throttler.guard.js';
import { ApiRateLimited } from './rate-limit.openapi.js';

/**
 * Limits the route to `RATE_LIMIT_REQUESTS` per client per `RATE_LIMIT_WINDOW_SECONDS`; beyond it
 * the answer is a 429 problem with `Retry-After`. Documents the `X-RateLimit-*` headers too: put it
 * above the route's response decorators (and above `@Idempotent()`).
 *
 * @example
 *   @Post()
 *   @RateLimited()
 *   create(@Body() dto: CreateThingDto) { ... }
 */
export function RateLimited(): MethodDecorator {
  return applyDecorators(UseGuards(ClientThrottlerGuard), ApiRateLimited);
}
