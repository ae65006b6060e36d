import { describe, expect, it } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import type { IdempotencyOptions } from '../../src/idempotency/idempotency.options.js';
import type { KeyRequest, StoredResponse } from '../../src/idempotency/idempotency.types.js';
import { ReplayCache, type SentRequest } from '../../src/idempotency/replay-cache.js';

/** Completed answers kept in memory: pure code on the real clock (short lifetimes, generous margins), no database. */
const cacheOf = (entries: number, seconds = 60) => new ReplayCache({ replayCache: { entries, seconds } } as IdempotencyOptions);
const keyed = (key: string, scope = 'alice'): KeyRequest => ({ scope, key, fingerprint: 'f'.repeat(64) });
// null: a request without a body.
const sent = (body: string | null = '{"monto":1999}', target = '/pagos', method = 'POST'): SentRequest => ({
  method, target, body: body === null ? undefined : Buffer.from(body),
});
const answer = (body: string): StoredResponse => ({ status: 201, headers: { location: '/pagos/1' }, body });

describe('ReplayCache', () => {
  it('answers a retry that repeats the request byte for byte with the stored answer', () => {
    const cache = cacheOf(10);
    cache.remember(keyed('k1'), sent(), answer('{"id":1}'), 3600);
    expect(cache.find('alice', 'k1', sent())).toEqual(answer('{"id":1}'));
  });

  it('does not answer other bytes, another target or method, key or scope: the key row decides those', () => {
    const cache = cacheOf(10);
    cache.remember(keyed('k1'), sent(), answer('{"id":1}'), 3600);
    expect(cache.find('alice', 'k1', sent('{"monto":1998}'))).toBeUndefined();
    // The same JSON with another spacing: the row's fingerprint says it is the same request, not the cache.
    expect(cache.find('alice', 'k1', sent('{ "monto": 1999 }'))).toBeUndefined();
    expect(cache.find('alice', 'k1', sent(null))).toBeUndefined();
    expect(cache.find('alice', 'k1', sent(null, '/pagos?x=1'))).toBeUndefined();
    expect(cache.find('alice', 'k1', sent('{"monto":1999}', '/pagos', 'PUT'))).toBeUndefined();
    expect(cache.find('alice', 'k2', sent())).toBeUndefined();
    expect(cache.find('bob', 'k1', sent())).toBeUndefined();
  });

  it('answers a bodiless retry of a bodiless request', () => {
    const cache = cacheOf(10);
    cache.remember(keyed('k1'), sent(null), answer('{}'), 3600);
    expect(cache.find('alice', 'k1', sent(null))).toEqual(answer('{}'));
    expect(cache.find('alice', 'k1', sent('{}'))).toBeUndefined();
  });

  it('keeps nothing when the key has less than the margin left, and never outlives the key', async () => {
    const cache = cacheOf(10);
    cache.remember(keyed('dying'), sent(), answer('{}'), 0.9);
    expect(cache.find('alice', 'dying', sent())).toBeUndefined();
    // 1.5 s left: kept 0.5 s, a second before the key expires.
    cache.remember(keyed('short'), sent(), answer('{}'), 1.5);
    expect(cache.find('alice', 'short', sent())).toEqual(answer('{}'));
    await delay(1_000);
    expect(cache.find('alice', 'short', sent())).toBeUndefined();
  });

  it('keeps an answer no longer than its configured seconds, however long the key lives', async () => {
    const cache = cacheOf(10, 1);
    cache.remember(keyed('k1'), sent(), answer('{}'), 3600);
    expect(cache.find('alice', 'k1', sent())).toEqual(answer('{}'));
    await delay(1_500);
    expect(cache.find('alice', 'k1', sent())).toBeUndefined();
  });

  it('holds at most its entries, the least recently used going first', () => {
    const cache = cacheOf(2);
    cache.remember(keyed('a'), sent(), answer('a'), 3600);
    cache.remember(keyed('b'), sent(), answer('b'), 3600);
    cache.find('alice', 'a', sent());
    cache.remember(keyed('c'), sent(), answer('c'), 3600);
    expect(['a', 'b', 'c'].map((key) => cache.find('alice', key, sent()))).toEqual([answer('a'), undefined, answer('c')]);
  });

  it('holds at most 2 KiB an entry on average: big bodies push the oldest out before the count is reached', () => {
    const cache = cacheOf(4);
    const padded = (name: string) => sent(`{"monto":1999}${' '.repeat(3_000)}${name}`);
    for (const key of ['a', 'b', 'c']) cache.remember(keyed(key), padded(key), answer(key), 3600);
    expect(['a', 'b', 'c'].map((key) => cache.find('alice', key, padded(key)))).toEqual([undefined, answer('b'), answer('c')]);
  });

  it('with 0 entries keeps nothing', () => {
    const cache = cacheOf(0);
    cache.remember(keyed('k1'), sent(), answer('{}'), 3600);
    expect(cache.find('alice', 'k1', sent())).toBeUndefined();
  });
});
