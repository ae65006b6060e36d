import { describe, expect, it } from '@jest/globals';
import { backoffMs, decideRetry, isFinalAnswer, parseRetryAfterMs, type RetryPolicy } from '../../examples/client/retry-policy.js';
import { sendWithRetries } from '../../examples/client/send-with-retries.js';
import { seededRandom } from '../support/seeded-random.js';

/** The example client's retry policy, pure: answers are plain objects, the clock and randomness are passed in. */
const NOW = Date.parse('2026-12-02T18:00:00Z');
const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({ maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 1_000, random: seededRandom(1), ...overrides });
const answer = (status: number, headers: Record<string, string> = {}, type?: string) => ({
  status,
  headers: new Headers(headers),
  json: type === undefined ? undefined : { type: `https://pagos.dev/problems/${type}`, status },
});

describe('isFinalAnswer', () => {
  it.each([200, 201, 400, 401, 402, 404, 413, 415, 422, 501])('%i is final: sending it again would get the same', (status) => {
    expect(isFinalAnswer(answer(status))).toBe(true);
  });

  it.each([429, 500, 502, 503, 504])('%i is transient: the same request may succeed later', (status) => {
    expect(isFinalAnswer(answer(status))).toBe(false);
  });

  it('a 409 is transient only when the key or the order is in flight; a stored business 409 is final', () => {
    expect(isFinalAnswer(answer(409, {}, 'idempotency-key-in-flight'))).toBe(false);
    expect(isFinalAnswer(answer(409, {}, 'orden-con-pago-en-curso'))).toBe(false);
    expect(isFinalAnswer(answer(409, {}, 'orden-ya-pagada'))).toBe(true);
    expect(isFinalAnswer(answer(409))).toBe(true);
  });
});

describe('backoffMs (exponential, full jitter, capped)', () => {
  it('draws from [0, base · 2^(attempt−1)), capped at maxDelayMs', () => {
    const highest = policy({ random: () => 0.999999 });
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffMs(attempt, highest))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffMs(5, policy({ random: () => 0 }))).toBe(0);
  });

  it('spreads 1000 clients over the whole window instead of retrying together', () => {
    const random = seededRandom(20261202);
    const delays = Array.from({ length: 1000 }, () => backoffMs(4, policy({ random })));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(800);
    expect(new Set(delays).size).toBeGreaterThan(500);
    const mean = delays.reduce((sum, delay) => sum + delay, 0) / delays.length;
    expect(mean).toBeGreaterThan(350);
    expect(mean).toBeLessThan(450);
  });
});

describe('parseRetryAfterMs', () => {
  it.each([
    ['1', 1_000],
    [' 2 ', 2_000],
    ['0', 0],
    ['Wed, 02 Dec 2026 18:00:30 GMT', 30_000],
    ['Wed, 02 Dec 2026 17:59:00 GMT', 0],
  ])('reads %j as %i ms', (header, ms) => {
    expect(parseRetryAfterMs(header, NOW)).toBe(ms);
  });

  it.each([null, '', '-1', '1.5', 'soon', '2026-12-02T18:00:30Z', '1e3'])('ignores %j', (header) => {
    expect(parseRetryAfterMs(header, NOW)).toBeUndefined();
  });
});

describe('decideRetry', () => {
  it('stops on a final answer even with attempts left, and ignores its Retry-After', () => {
    expect(decideRetry(1, answer(201), policy(), NOW)).toEqual({ retry: false, reason: 'final-answer' });
    expect(decideRetry(1, answer(422, { 'retry-after': '1' }), policy(), NOW)).toEqual({ retry: false, reason: 'final-answer' });
  });

  it('retries a network failure (no answer) with backoff alone', () => {
    expect(decideRetry(2, undefined, policy({ random: () => 0.5 }), NOW)).toEqual({ retry: true, delayMs: 100, retryAfterMs: undefined });
  });

  it('waits at least Retry-After, in seconds or as an HTTP-date, even when the backoff is shorter', () => {
    const inFlight = answer(409, { 'retry-after': '1' }, 'idempotency-key-in-flight');
    expect(decideRetry(1, inFlight, policy({ random: () => 0.5 }), NOW)).toEqual({ retry: true, delayMs: 1_000, retryAfterMs: 1_000 });
    const unavailable = answer(503, { 'retry-after': 'Wed, 02 Dec 2026 18:00:02 GMT' });
    expect(decideRetry(1, unavailable, policy(), NOW)).toEqual({ retry: true, delayMs: 2_000, retryAfterMs: 2_000 });
  });

  it('keeps a backoff longer than Retry-After', () => {
    const decision = decideRetry(6, answer(503, { 'retry-after': '0' }), policy({ maxAttempts: 9, random: () => 0.999999 }), NOW);
    expect(decision).toEqual({ retry: true, delayMs: 999, retryAfterMs: 0 });
  });

  it('gives up when the attempts are spent or Retry-After is longer than this run waits', () => {
    expect(decideRetry(6, answer(503), policy(), NOW)).toEqual({ retry: false, reason: 'attempts-exhausted' });
    expect(decideRetry(1, answer(429, { 'retry-after': '61' }), policy(), NOW)).toEqual({ retry: false, reason: 'retry-after-too-long' });
    expect(decideRetry(1, answer(429, { 'retry-after': '5' }), policy({ maxRetryAfterMs: 4_000 }), NOW)).toEqual({
      retry: false,
      reason: 'retry-after-too-long',
    });
  });
});

describe('sendWithRetries (the loop, with a scripted sender and a recording sleep)', () => {
  it('sends again after a network error and a 503, sleeping what the policy says, and ends on the 201', async () => {
    const script = [() => Promise.reject(new TypeError('fetch failed')), () => Promise.resolve(answer(503, { 'retry-after': '2' })), () => Promise.resolve(answer(201))];
    const sleeps: number[] = [];
    const reports: string[] = [];
    const outcome = await sendWithRetries(() => script.shift()!(), policy({ random: () => 0.5 }), {
      sleep: async (ms) => void sleeps.push(ms),
      now: () => NOW,
      onAttempt: ({ attempt, answer, error }) => reports.push(`${attempt}:${answer?.status ?? error?.message}`),
    });
    expect(outcome).toMatchObject({ final: true, attempts: 3, networkErrors: 1, result: { status: 201 } });
    expect(sleeps).toEqual([50, 2_000]);
    expect(reports).toEqual(['1:fetch failed', '2:503', '3:201']);
  });

  it('stops after maxAttempts without a final answer, and says so', async () => {
    let sent = 0;
    const outcome = await sendWithRetries(async () => (sent++, answer(502)), policy({ maxAttempts: 4 }), { sleep: async () => undefined });
    expect(sent).toBe(4);
    expect(outcome).toMatchObject({ final: false, attempts: 4, networkErrors: 0, result: { status: 502 } });
  });
});
