import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { DeferredCommit } from './transactions.js';

const JOINABLE_COMMIT = Symbol('database:joinableCommit');

interface RequestWithCommit {
  [JOINABLE_COMMIT]?: DeferredCommit;
}

/** Offers `commit` to the request's handler: writes it passes to `Transactions.runJoinable` join it. */
export function attachJoinableCommit(request: object, commit: DeferredCommit): void {
  (request as RequestWithCommit)[JOINABLE_COMMIT] = commit;
}

/**
 * Injects the deferred commit that a layer around the handler opened for this request (the
 * idempotency interceptor, to store its answer with the handler's last write), or undefined.
 *
 * @example
 *   create(@Body() dto: CreateThingDto, @JoinableCommit() commit?: DeferredCommit) {
 *     return this.transactions.runJoinable((db) => insertThing(db, dto), commit);
 *   }
 */
export const JoinableCommit = createParamDecorator(
  (_data: unknown, context: ExecutionContext): DeferredCommit | undefined => context.switchToHttp().getRequest<RequestWithCommit>()[JOINABLE_COMMIT],
);
