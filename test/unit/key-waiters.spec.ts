import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { IdempotencyEvents } from '../../src/idempotency/idempotency.events.js';
import type { IdempotencyOptions } from '../../src/idempotency/idempotency.options.js';
import { KeyWaiters } from '../../src/idempotency/key-waiters.js';

/** The in-memory registry of waiting duplicates: pure code, fake timers, no database. */
const options = { waiting: { defaultSeconds: 0, maxSeconds: 10, maxWaiters: 2 } } as IdempotencyOptions;
const never = new AbortController().signal;

describe('KeyWaiters', () => {
  let waiters: KeyWaiters;

  beforeEach(() => {
    jest.useFakeTimers();
    waiters = new KeyWaiters(new IdempotencyEvents(), options);
    waiters.setListening(true);
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('a settlement between watching and waiting is not lost: the wait returns at once', async () => {
    const watch = waiters.watch('alice', 'k1');
    waiters.keySettled('alice', 'k1');
    await expect(watch.wait(10_000, never)).resolves.toBe('notified');
  });

  it('wakes only the watches of that scope and key', async () => {
    const mine = waiters.watch('alice', 'k1');
    const otherScope = waiters.watch('bob', 'k1');
    const otherKey = waiters.watch('alice', 'k2');
    const results = [mine, otherScope, otherKey].map((watch) => watch.wait(10_000, never));
    waiters.keySettled('alice', 'k1');
    await jest.advanceTimersByTimeAsync(10_000);
    await expect(Promise.all(results)).resolves.toEqual(['notified', 'elapsed', 'elapsed']);
  });

  it('scope and key cannot be confused by a separator inside them', async () => {
    let reason: string | undefined;
    void waiters.watch('a","b', 'c').wait(1_000, never).then((r) => (reason = r));
    waiters.keySettled('a', '","b","c');
    await jest.advanceTimersByTimeAsync(0);
    expect(reason).toBeUndefined();
    waiters.keySettled('a","b', 'c');
    await jest.advanceTimersByTimeAsync(0);
    expect(reason).toBe('notified');
  });

  it('while notifications are down a wait is cut to a poll interval of 100–250 ms', async () => {
    waiters.setListening(false);
    let reason: string | undefined;
    void waiters.watch('alice', 'k1').wait(10_000, never).then((r) => (reason = r));
    await jest.advanceTimersByTimeAsync(99);
    expect(reason).toBeUndefined();
    await jest.advanceTimersByTimeAsync(151);
    expect(reason).toBe('elapsed');
  });

  it('the listener coming up or going down makes every waiter re-read', async () => {
    const result = waiters.watch('alice', 'k1').wait(10_000, never);
    waiters.setListening(false);
    await expect(result).resolves.toBe('recheck');
  });

  it('a client that goes away ends its wait', async () => {
    const gone = new AbortController();
    const result = waiters.watch('alice', 'k1').wait(10_000, gone.signal);
    gone.abort();
    await expect(result).resolves.toBe('aborted');
  });

  it(`admits at most maxWaiters (${options.waiting.maxWaiters}) at once, and frees a place on leave`, () => {
    expect([waiters.enter(), waiters.enter(), waiters.enter()]).toEqual([true, true, false]);
    waiters.leave();
    expect(waiters.enter()).toBe(true);
  });

  it('shutdown wakes every waiter, and admits and watches no more', async () => {
    const result = waiters.watch('alice', 'k1').wait(10_000, never);
    waiters.onModuleDestroy();
    await expect(result).resolves.toBe('closing');
    expect(waiters.enter()).toBe(false);
    await expect(waiters.watch('alice', 'k2').wait(10_000, never)).resolves.toBe('closing');
  });

  it('a finished or cancelled watch is forgotten: nothing is kept per key', async () => {
    const watch = waiters.watch('alice', 'k1');
    watch.cancel();
    const waited = waiters.watch('alice', 'k1').wait(0, never);
    await jest.advanceTimersByTimeAsync(0);
    await waited;
    expect((waiters as unknown as { watches: Map<string, unknown> }).watches.size).toBe(0);
  });
});
