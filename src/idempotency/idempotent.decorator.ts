import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_ROUTE } from './idempotency.constants.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';

/**
 * Makes a write route idempotent: it then requires an `Idempotency-Key` header, runs its handler at
 * most once per key (and scope), and answers every retry with the first response.
 *
 * @example
 *   @Post()
 *   @Idempotent()
 *   create(@Body() dto: CreateThingDto) { ... }
 */
export function Idempotent(): MethodDecorator {
  return applyDecorators(SetMetadata(IDEMPOTENT_ROUTE, true), UseInterceptors(IdempotencyInterceptor));
}
