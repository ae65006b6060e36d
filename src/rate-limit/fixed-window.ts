import type { ThrottlerStorage } from '@nestjs/throttler';

/** What a store answers for one hit (@nestjs/throttler does not export the name of this type). */
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * Both rate-limit stores count fixed windows: a client's first request opens a window of
 * `RATE_LIMIT_WINDOW_SECONDS`; each request in it adds one to one counter; past the limit the
 * client is refused until the window ends. One number per client and window, whatever the limit
 * (@nestjs/throttler's own store keeps a timestamp per request and scans them on each one).
 *
 * @example
 *   windowRecord(11, 2500, 10) // { totalHits: 11, timeToExpire: 3, isBlocked: true, timeToBlockExpire: 3 }
 */
export function windowRecord(hits: number, msLeft: number, limit: number): ThrottlerStorageRecord {
  // Whole seconds for Retry-After, and never 0 while the window is still open.
  const secondsLeft = Math.max(1, Math.ceil(msLeft / 1000));
  const isBlocked = hits > limit;
  return { totalHits: hits, timeToExpire: secondsLeft, isBlocked, timeToBlockExpire: isBlocked ? secondsLeft : 0 };
}

/** What a store answers when it could not count: the request goes through (the limiter fails open). */
export const UNCOUNTED: ThrottlerStorageRecord = { totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 };
