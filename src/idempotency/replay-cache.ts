import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import type { KeyRequest, StoredResponse } from './idempotency.types.js';
import { keyId } from './key-waiters.js';

interface CachedReplay {
  readonly fingerprint: string;
  readonly response: StoredResponse;
}

// A key read with less time left than this is not kept: the entry's end, counted on this process's
// clock from when the row arrived, would come after the key's end by the time the row took to arrive.
const EXPIRY_MARGIN_SECONDS = 1;

/**
 * Completed answers this process replayed, kept in memory for a short while so the next retries of
 * the key are answered without reading it again. Sound because a completed key never changes until it
 * expires (no statement of idempotency.sql.ts moves it on), so every replica replays the same bytes;
 * an entry never outlives its key (it ends before the key's expiry as PostgreSQL counted it), so an
 * expired key still starts a new operation. A request whose fingerprint differs from the entry's is
 * not answered here: the key's row decides, as without the cache. Bounded in entries, least recently
 * used first out.
 */
@Injectable()
export class ReplayCache {
  private readonly entries?: LRUCache<string, CachedReplay>;
  private readonly seconds: number;

  constructor(@Inject(IDEMPOTENCY_OPTIONS) { replayCache }: IdempotencyOptions) {
    this.seconds = replayCache.seconds;
    // ttlResolution 0: the clock read on each lookup, instead of a timer per lookup to reuse it for 1 ms.
    if (replayCache.entries > 0) this.entries = new LRUCache({ max: replayCache.entries, ttlResolution: 0 });
  }

  /** The stored answer for this request, if this process replayed it lately and the key still lives. */
  find(request: KeyRequest): StoredResponse | undefined {
    const cached = this.entries?.get(keyId(request.scope, request.key));
    return cached?.fingerprint === request.fingerprint ? cached.response : undefined;
  }

  /** Keeps a completed key's answer, read with `expiresInSeconds` left, for its next replays. */
  remember(request: KeyRequest, response: StoredResponse, expiresInSeconds: number): void {
    const seconds = Math.min(this.seconds, expiresInSeconds - EXPIRY_MARGIN_SECONDS);
    if (seconds <= 0) return;
    this.entries?.set(keyId(request.scope, request.key), { fingerprint: request.fingerprint, response }, { ttl: seconds * 1000 });
  }
}
