import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * What an `@Idempotent()` request turned out to be, exactly one per request that reached the claim:
 * - executed: a new key; the handler ran.
 * - expired: the key existed but had expired; it counted as unused and the handler ran.
 * - lock_recovered: a released or stale claim was taken over; the handler resumed the operation.
 * - replayed: the stored answer was sent again.
 * - mismatch: the key was first used with a different request (422).
 * - in_flight_conflict: another request holds the key (409) and this one did not wait.
 * - waited_replay: another request held the key; this one waited (`Prefer: wait`) and replays its answer.
 * - wait_timeout: waited, and the key was still in flight when the wait ended (409): its time ran
 *   out, its client went away, or the process began shutting down.
 * A waiter whose key was released (or vanished) meanwhile ran the handler: lock_recovered (or executed).
 */
export const IDEMPOTENCY_OUTCOMES = [
  'executed', 'expired', 'lock_recovered', 'replayed', 'mismatch', 'in_flight_conflict', 'waited_replay', 'wait_timeout',
] as const;
export type IdempotencyOutcome = (typeof IDEMPOTENCY_OUTCOMES)[number];

/** One run of the purge job: the keys it deleted, or that it failed. */
export type PurgeRun = { readonly ok: true; readonly purged: number } | { readonly ok: false };

/** A duplicate that waited for its key: what it ended as, and after how long. */
export interface KeyWait {
  readonly outcome: IdempotencyOutcome;
  readonly seconds: number;
}

/**
 * Where the mechanism reports what it did, so that metrics can count it without this module
 * knowing about them: listeners subscribe, the interceptor, the purge job and the settled-key
 * listener (whether its connection is up) publish.
 */
@Injectable()
export class IdempotencyEvents {
  private readonly outcomeListeners: Array<(outcome: IdempotencyOutcome, request: FastifyRequest) => void> = [];
  private readonly purgeListeners: Array<(run: PurgeRun) => void> = [];
  private readonly waitListeners: Array<(wait: KeyWait) => void> = [];
  private readonly listenerListeners: Array<(connected: boolean) => void> = [];
  private readonly waitersListeners: Array<(waiting: number) => void> = [];

  /** The request comes along for whoever describes it afterwards (the request log). */
  onOutcome(listener: (outcome: IdempotencyOutcome, request: FastifyRequest) => void): void {
    this.outcomeListeners.push(listener);
  }

  onPurge(listener: (run: PurgeRun) => void): void {
    this.purgeListeners.push(listener);
  }

  onWait(listener: (wait: KeyWait) => void): void {
    this.waitListeners.push(listener);
  }

  onListenerState(listener: (connected: boolean) => void): void {
    this.listenerListeners.push(listener);
  }

  onWaiters(listener: (waiting: number) => void): void {
    this.waitersListeners.push(listener);
  }

  outcome(request: FastifyRequest, outcome: IdempotencyOutcome): void {
    for (const listener of this.outcomeListeners) listener(outcome, request);
  }

  purge(run: PurgeRun): void {
    for (const listener of this.purgeListeners) listener(run);
  }

  waited(wait: KeyWait): void {
    for (const listener of this.waitListeners) listener(wait);
  }

  listener(connected: boolean): void {
    for (const listener of this.listenerListeners) listener(connected);
  }

  /** How many duplicates wait right now. */
  waiters(waiting: number): void {
    for (const listener of this.waitersListeners) listener(waiting);
  }
}
