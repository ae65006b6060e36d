import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { windowRecord } from '../../src/rate-limit/fixed-window.js';
import { MemoryThrottlerStorage } from '../../src/rate-limit/memory-throttler.storage.js';

/** The in-process fixed-window counter, on Jest's fake clock; no app, no Redis. */
const WINDOW_MS = 60_000;
const LIMIT = 3;

describe('MemoryThrottlerStorage', () => {
  let storage: MemoryThrottlerStorage;

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-12-01T10:00:00Z') });
    storage = new MemoryThrottlerStorage();
  });

  afterEach(() => {
    storage.onApplicationShutdown();
    jest.useRealTimers();
  });

  const hit = (key = 'alice') => storage.increment(key, WINDOW_MS, LIMIT, WINDOW_MS, 'default');

  it(`lets ${LIMIT} requests of a window through and refuses the next until the window ends`, async () => {
    for (let i = 1; i <= LIMIT; i++) expect(await hit()).toEqual({ totalHits: i, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
    jest.advanceTimersByTime(15_500);
    expect(await hit()).toEqual({ totalHits: LIMIT + 1, timeToExpire: 45, isBlocked: true, timeToBlockExpire: 45 });
    jest.advanceTimersByTime(WINDOW_MS - 15_500);
    expect(await hit()).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('counts each key on its own', async () => {
    for (let i = 0; i <= LIMIT; i++) await hit('alice');
    expect(await hit('bob')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('counts past the 10,000 that once capped RATE_LIMIT_REQUESTS, and refuses only past the limit', async () => {
    const limit = 50_000;
    for (let i = 0; i < limit - 1; i++) await storage.increment('alice', WINDOW_MS, limit, WINDOW_MS, 'default');
    expect(await storage.increment('alice', WINDOW_MS, limit, WINDOW_MS, 'default')).toMatchObject({ totalHits: limit, isBlocked: false });
    expect(await storage.increment('alice', WINDOW_MS, limit, WINDOW_MS, 'default')).toMatchObject({ totalHits: limit + 1, isBlocked: true });
  });
});

describe('windowRecord', () => {
  it('rounds the time left up to whole seconds, and never says 0 while the window is open', () => {
    expect(windowRecord(11, 2500, 10)).toEqual({ totalHits: 11, timeToExpire: 3, isBlocked: true, timeToBlockExpire: 3 });
    expect(windowRecord(11, 1, 10)).toMatchObject({ timeToBlockExpire: 1 });
    expect(windowRecord(10, 59_000, 10)).toEqual({ totalHits: 10, timeToExpire: 59, isBlocked: false, timeToBlockExpire: 0 });
  });
});
