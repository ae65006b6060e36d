import type { HttpResult } from './http.js';

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** A seeded source of jitter, so runs repeat. */
  readonly random: () => number;
}

export interface RetryOutcome {
  /** The final answer; undefined when every attempt failed at the network level. */
  readonly result: HttpResult | undefined;
  readonly attempts: number;
  readonly networkErrors: number;
}

// What a well-behaved client retries: the network failed, the key is busy, or we failed on our side.
const RETRYABLE_STATUSES = new Set([409, 500, 502, 503, 504]);

/**
 * A mobile client's retry loop: the same request (and key) again after a network error, a 409 in
 * flight or a 5xx, with exponential backoff and full jitter, honouring Retry-After; stops on any
 * other answer. A 409 that is a stored business answer (not "in flight") is final too.
 */
export async function sendWithRetries(send: () => Promise<HttpResult>, policy: RetryPolicy): Promise<RetryOutcome> {
  let networkErrors = 0;
  let last: HttpResult | undefined;
  for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
    try {
      last = await send();
      if (!isRetryable(last)) return { result: last, attempts: attempt, networkErrors };
    } catch {
      networkErrors++;
    }
    if (attempt < policy.maxAttempts) await sleep(delayMs(attempt, last, policy));
  }
  return { result: last, attempts: policy.maxAttempts, networkErrors };
}

function isRetryable(result: HttpResult): boolean {
  if (!RETRYABLE_STATUSES.has(result.status)) return false;
  return result.status !== 409 || String(result.json?.type ?? '').includes('idempotency-key-in-flight');
}

function delayMs(attempt: number, last: HttpResult | undefined, policy: RetryPolicy): number {
  const retryAfter = Number(last?.headers.get('retry-after'));
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)) * policy.random();
  return Number.isFinite(retryAfter) && retryAfter > 0 ? Math.max(backoff, Math.min(retryAfter * 1000, policy.maxDelayMs)) : backoff;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
