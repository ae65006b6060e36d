import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import type { KeyRequest, StoredResponse } from './idempotency.types.js';
import { keyId } from './key-waiters.js';

/** A request as it came: what a retry answered from memory must repeat byte for byte. */
export interface SentRequest {
  readonly method: string;
  /** The request target as sent (path and query). */
  readonly target: string;
  /** The body's bytes (decompressed); undefined without one. */
  readonly body: Buffer | undefined;
}

interface CachedReplay {
  readonly sent: SentRequest;
  readonly response: StoredResponse;
}

// The memory an entry is counted for on average: the cache holds `entries` × this at most, whatever
// the bodies (a valid payment's JSON may carry up to 64 KiB of white space). Payments take about 600 bytes.
const BYTES_PER_ENTRY = 2_048;
// An entry's keys, headers and bookkeeping, counted besides the two bodies.
const ENTRY_OVERHEAD_BYTES = 256;

// A key read with less time left than this is not kept: the entry's end, counted on this process's
// clock from when the row arrived, would come after the key's end by the time the row took to arrive.
const EXPIRY_MARGIN_SECONDS = 1;

/**
 * Completed answers this process replayed, kept in memory for a short while so the next retries of
 * the key are answered without reading it again. Sound because a completed key never changes until it
 * expires (no statement of idempotency.sql.ts moves it on), so every replica replays the same bytes;
 * an entry never outlives its key (it ends before the key's expiry as PostgreSQL counted it), so an
 * expired key still starts a new operation. Only a retry that repeats the remembered request byte for
 * byte is answered here (same method, target and body bytes: the same fingerprint, without computing
 * it); any other request with the key goes to the key's row, as without the cache. Bounded in
 * entries and in bytes, least recently used first out.
 */
@Injectable()
export class ReplayCache {
  private readonly entries?: LRUCache<string, CachedReplay>;
  private readonly seconds: number;

  constructor(@Inject(IDEMPOTENCY_OPTIONS) { replayCache }: IdempotencyOptions) {
    this.seconds = replayCache.seconds;
    if (replayCache.entries === 0) return;
    this.entries = new LRUCache({
      max: replayCache.entries,
      maxSize: replayCache.entries * BYTES_PER_ENTRY,
      sizeCalculation: ({ sent, response }) => ENTRY_OVERHEAD_BYTES + (sent.body?.length ?? 0) + response.body.length,
      // The clock read on each lookup, instead of a timer per lookup to reuse it for 1 ms.
      ttlResolution: 0,
    });
  }

  /** The stored answer for this retry of the key, if this process replayed it lately and the key still lives. */
  find(scope: string, key: string, sent: SentRequest): StoredResponse | undefined {
    const cached = this.entries?.get(keyId(scope, key));
    return cached && isRepeated(sent, cached.sent) ? cached.response : undefined;
  }

  /** Keeps a completed key's answer, read with `expiresInSeconds` left, for the next retries that repeat `sent`. */
  remember({ scope, key }: KeyRequest, sent: SentRequest, response: StoredResponse, expiresInSeconds: number): void {
    const seconds = Math.min(this.seconds, expiresInSeconds - EXPIRY_MARGIN_SECONDS);
    if (seconds <= 0) return;
    this.entries?.set(keyId(scope, key), { sent, response }, { ttl: seconds * 1000 });
  }
}

function isRepeated(sent: SentRequest, remembered: SentRequest): boolean {
  if (sent.method !== remembered.method || sent.target !== remembered.target) return false;
  return sent.body === undefined || remembered.body === undefined ? sent.body === remembered.body : sent.body.equals(remembered.body);
}
