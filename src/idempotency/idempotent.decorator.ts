import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_ROUTE, type IdempotentRouteOptions } from './idempotency.constants.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { ApiIdempotent } from './idempotency.openapi.js';

/**
 * Makes a write route idempotent: it then requires an `Idempotency-Key` header, runs its handler at
 * most once per key (and scope), and answers every retry with the first response. It also documents
 * all of that in OpenAPI; put it above the route's own response decorators. With
 * `claimWithFirstWrite` the claim costs no round trip of its own (see {@link IdempotentRouteOptions}).
 *
 * @example
 *   @Post()
 *   @Idempotent()
 *   @ApiCreatedResponse({ type: ThingResponse })
 *   create(@Body() dto: CreateThingDto) { ... }
 */
export function Idempotent(route: IdempotentRouteOptions = {}): MethodDecorator {
  return applyDecorators(SetMetadata(IDEMPOTENT_ROUTE, route), UseInterceptors(IdempotencyInterceptor), ApiIdempotent());
}
