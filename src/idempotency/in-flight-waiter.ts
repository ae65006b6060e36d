import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { untilClientHangsUp } from '../http/client-hang-up.js';
import { PREFERENCE_APPLIED_HEADER, preferredWaitOf } from '../http/prefer-wait.js';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { IdempotencyStore } from './idempotency.store.js';
import type { ClaimOutcome, KeyRequest } from './idempotency.types.js';
import { keyId, KeyWaiters } from './key-waiters.js';

/** What a duplicate ended with, and how long it waited for it (undefined: it did not wait). */
export interface WaitedOutcome {
  readonly outcome: ClaimOutcome;
  readonly waitedSeconds: number | undefined;
}

/**
 * Lets a duplicate whose key is in flight wait, bounded, for the first attempt to settle, instead
 * of answering 409 at once: `Prefer: wait=N` (RFC 7240) up to `maxSeconds`, else `defaultSeconds`.
 * Each time the key may have settled it goes through the store's claim path again, as a retry
 * would: a completed key is replayed, a released one taken over (this request then runs it).
 * Before each read it marks the key waited: only then is its settlement notified.
 */
@Injectable()
export class InFlightWaiter {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly waiters: KeyWaiters,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
  ) {}

  async waitForSettled(keyRequest: KeyRequest, request: FastifyRequest, reply: FastifyReply): Promise<WaitedOutcome> {
    const preferred = preferredWaitOf(request);
    const seconds = Math.min(preferred ?? this.options.waiting.defaultSeconds, this.options.waiting.maxSeconds);
    if (seconds === 0 || !this.waiters.enter()) return { outcome: { kind: 'in_flight' }, waitedSeconds: undefined };
    if (preferred !== undefined) reply.header(PREFERENCE_APPLIED_HEADER, `wait=${seconds}`);
    const started = performance.now();
    try {
      // The client hanging up ends the wait; the first attempt runs on regardless.
      const outcome = await untilClientHangsUp(reply, (hungUp) => this.waitLoop(keyRequest, started + seconds * 1000, hungUp));
      return { outcome, waitedSeconds: (performance.now() - started) / 1000 };
    } finally {
      this.waiters.leave();
    }
  }

  private async waitLoop(keyRequest: KeyRequest, deadline: number, signal: AbortSignal): Promise<ClaimOutcome> {
    // Mark, then read: a settlement the read misses came after the mark, so it is notified
    // (MARK_KEY_WAITED says why), and the watch readUntil took first is there to receive it.
    const read = async (): Promise<ClaimOutcome> => {
      await this.store.markKeyWaited(keyRequest);
      return this.store.claimKey(keyRequest);
    };
    const settled = (outcome: ClaimOutcome): boolean => outcome.kind !== 'in_flight';
    return (await this.waiters.readUntil(keyId(keyRequest.scope, keyRequest.key), read, settled, deadline, signal)).value;
  }
}
