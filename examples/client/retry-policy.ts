/**
 * When a payment request is worth sending again, and after how long. Pure: the caller passes the
 * answer, the attempt number and the clock, so every decision can be tested without a network.
 */

/** What the retry policy reads from an answer: its status, its headers and, for a 409, the problem type. */
export interface RetryableAnswer {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly json?: unknown;
}

export interface RetryPolicy {
  readonly maxAttempts: number;
  /** The backoff before the second attempt; it doubles with each attempt up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /**
   * The longest `Retry-After` this run waits out (default 60 s: a user watching a spinner gives up
   * sooner). A longer one ends the run with the operation still pending, to resume later.
   */
  readonly maxRetryAfterMs?: number;
  /** In [0, 1); seeded in tests, so a run's delays repeat. */
  readonly random: () => number;
}

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number; readonly retryAfterMs: number | undefined }
  | { readonly retry: false; readonly reason: 'final-answer' | 'attempts-exhausted' | 'retry-after-too-long' };

const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

// Transient on the server's side: the same request may succeed later. 409 only when it is the key in
// flight, or the order held by a payment in progress (the server stores neither).
const TRANSIENT_STATUSES = new Set([409, 429, 500, 502, 503, 504]);
const TRANSIENT_CONFLICT_TYPE = /\/(idempotency-key-in-flight|orden-con-pago-en-curso)$/;
// The HTTP-date form servers must send, e.g. `Wed, 02 Dec 2026 18:21:37 GMT`; Date.parse alone accepts almost anything.
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * An answer the client must keep: a success, and every 4xx but a key in flight, an order in progress
 * or throttling — including a stored business 409 such as `orden-ya-pagada`, which every retry would
 * get again.
 */
export function isFinalAnswer(answer: RetryableAnswer): boolean {
  if (!TRANSIENT_STATUSES.has(answer.status)) return true;
  if (answer.status !== 409) return false;
  const type = (answer.json as { type?: unknown } | undefined)?.type;
  return typeof type !== 'string' || !TRANSIENT_CONFLICT_TYPE.test(type);
}

/**
 * After attempt number `attempt` (1-based) ended with `answer` (undefined: no answer arrived, the
 * network failed or the attempt timed out): stop, or wait `delayMs` and send the same request again.
 */
export function decideRetry(attempt: number, answer: RetryableAnswer | undefined, policy: RetryPolicy, nowMs: number): RetryDecision {
  if (answer && isFinalAnswer(answer)) return { retry: false, reason: 'final-answer' };
  if (attempt >= policy.maxAttempts) return { retry: false, reason: 'attempts-exhausted' };
  const retryAfterMs = answer ? parseRetryAfterMs(answer.headers.get('retry-after'), nowMs) : undefined;
  if (retryAfterMs !== undefined && retryAfterMs > (policy.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS)) {
    return { retry: false, reason: 'retry-after-too-long' };
  }
  return { retry: true, delayMs: Math.max(backoffMs(attempt, policy), retryAfterMs ?? 0), retryAfterMs };
}

/**
 * Exponential backoff with full jitter: uniform in [0, min(max, base · 2^(attempt−1))), so that
 * clients that failed together do not retry together.
 */
export function backoffMs(attempt: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(ceiling * policy.random());
}

/** `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 §10.2.3), in ms from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfterMs(header: string | null, nowMs: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (!IMF_FIXDATE.test(value)) return undefined;
  return Math.max(0, Date.parse(value) - nowMs);
}
