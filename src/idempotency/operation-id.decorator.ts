import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

const OPERATION = Symbol('idempotency:operation');

interface RequestWithOperation extends FastifyRequest {
  [OPERATION]?: string;
}

export function attachOperationId(request: FastifyRequest, operationId: string): void {
  (request as RequestWithOperation)[OPERATION] = operationId;
}

/**
 * Injects the operation id of the current idempotent request: stable across every retry and
 * takeover of one key, so the handler can hand it downstream as its own idempotency key.
 * Undefined on routes without `@Idempotent()`.
 *
 * @example
 *   create(@Body() dto: CreateThingDto, @IdempotentOperationId() operationId?: string) { ... }
 */
export const IdempotentOperationId = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined => context.switchToHttp().getRequest<RequestWithOperation>()[OPERATION],
);
