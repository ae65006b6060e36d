import { Injectable } from '@nestjs/common';
import type { Request } from 'express';

/**
 * What an `@Idempotent()` request turned out to be, exactly one per request that reached the claim:
 * - executed: a new key; the handler ran.
 * - expired: the key existed but had expired; it counted as unused and the handler ran.
 * - lock_recovered: a released or stale claim was taken over; the handler resumed the operation.
 * - replayed: the stored answer was sent again.
 * - mismatch: the key was first used with a different request (422).
 * - in_flight_conflict: another request holds the key (409).
 */
export const IDEMPOTENCY_OUTCOMES = ['executed', 'expired', 'lock_recovered', 'replayed', 'mismatch', 'in_flight_conflict'] as const;
export type IdempotencyOutcome = (typeof IDEMPOTENCY_OUTCOMES)[number];

/** One run of the purge job: the keys it deleted, or that it failed. */
export type PurgeRun = { readonly ok: true; readonly purged: number } | { readonly ok: false };

const OUTCOME = Symbol('idempotency:outcome');

interface RequestWithOutcome extends Request {
  [OUTCOME]?: IdempotencyOutcome;
}

/** The outcome of this request, for whoever describes it afterwards (the request log). */
export function idempotencyOutcomeOf(request: Request): IdempotencyOutcome | undefined {
  return (request as RequestWithOutcome)[OUTCOME];
}

/**
 * Where the mechanism reports what it did, so that metrics can count it without this module
 * knowing about them: listeners subscribe, the interceptor and the purge job publish.
 */
@Injectable()
export class IdempotencyEvents {
  private readonly outcomeListeners: Array<(outcome: IdempotencyOutcome) => void> = [];
  private readonly purgeListeners: Array<(run: PurgeRun) => void> = [];

  onOutcome(listener: (outcome: IdempotencyOutcome) => void): void {
    this.outcomeListeners.push(listener);
  }

  onPurge(listener: (run: PurgeRun) => void): void {
    this.purgeListeners.push(listener);
  }

  outcome(request: Request, outcome: IdempotencyOutcome): void {
    (request as RequestWithOutcome)[OUTCOME] = outcome;
    for (const listener of this.outcomeListeners) listener(outcome);
  }

  purge(run: PurgeRun): void {
    for (const listener of this.purgeListeners) listener(run);
  }
}
