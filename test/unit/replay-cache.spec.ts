import { describe, expect, it } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import type { IdempotencyOptions } from '../../src/idempotency/idempotency.options.js';
import type { KeyRequest, StoredResponse } from '../../src/idempotency/idempotency.types.js';
import { ReplayCache } from '../../src/idempotency/replay-cache.js';

/** Completed answers kept in memory: pure code on the real clock (short lifetimes, generous margins), no database. */
const cacheOf = (entries: number, seconds = 60) => new ReplayCache({ replayCache: { entries, seconds } } as IdempotencyOptions);
const request = (key: string, fingerprint = 'f'.repeat(64), scope = 'alice'): KeyRequest => ({ scope, key, fingerprint });
const answer = (body: string): StoredResponse => ({ status: 201, headers: { location: '/pagos/1' }, body });

describe('ReplayCache', () => {
  it('answers the same scope, key and fingerprint with the stored answer', () => {
    const cache = cacheOf(10);
    cache.remember(request('k1'), answer('{"id":1}'), 3600);
    expect(cache.find(request('k1'))).toEqual(answer('{"id":1}'));
  });

  it('does not answer another fingerprint, key or scope: the key row decides those', () => {
    const cache = cacheOf(10);
    cache.remember(request('k1'), answer('{"id":1}'), 3600);
    expect(cache.find(request('k1', 'e'.repeat(64)))).toBeUndefined();
    expect(cache.find(request('k2'))).toBeUndefined();
    expect(cache.find(request('k1', 'f'.repeat(64), 'bob'))).toBeUndefined();
  });

  it('keeps nothing when the key has less than the margin left, and never outlives the key', async () => {
    const cache = cacheOf(10);
    cache.remember(request('dying'), answer('{}'), 0.9);
    expect(cache.find(request('dying'))).toBeUndefined();
    // 1.5 s left: kept 0.5 s, a second before the key expires.
    cache.remember(request('short'), answer('{}'), 1.5);
    expect(cache.find(request('short'))).toEqual(answer('{}'));
    await delay(1_000);
    expect(cache.find(request('short'))).toBeUndefined();
  });

  it('keeps an answer no longer than its configured seconds, however long the key lives', async () => {
    const cache = cacheOf(10, 1);
    cache.remember(request('k1'), answer('{}'), 3600);
    expect(cache.find(request('k1'))).toEqual(answer('{}'));
    await delay(1_500);
    expect(cache.find(request('k1'))).toBeUndefined();
  });

  it('holds at most its entries, the least recently used going first', () => {
    const cache = cacheOf(2);
    cache.remember(request('a'), answer('a'), 3600);
    cache.remember(request('b'), answer('b'), 3600);
    cache.find(request('a'));
    cache.remember(request('c'), answer('c'), 3600);
    expect([cache.find(request('a')), cache.find(request('b')), cache.find(request('c'))]).toEqual([answer('a'), undefined, answer('c')]);
  });

  it('with 0 entries keeps nothing', () => {
    const cache = cacheOf(0);
    cache.remember(request('k1'), answer('{}'), 3600);
    expect(cache.find(request('k1'))).toBeUndefined();
  });
});
