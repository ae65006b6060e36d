import { decideRetry, type RetryableAnswer, type RetryDecision, type RetryPolicy } from './retry-policy.js';

/** What happened on one attempt: its answer or the error that left it without one, and what comes next. */
export interface AttemptReport<A extends RetryableAnswer> {
  readonly attempt: number;
  readonly answer: A | undefined;
  readonly error: Error | undefined;
  readonly decision: RetryDecision;
}

export interface RetryEnvironment<A extends RetryableAnswer> {
  /** Defaults to a timer; tests pass one that records the delay and returns when they choose. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** The clock an HTTP-date `Retry-After` is measured against. */
  readonly now?: () => number;
  readonly onAttempt?: (report: AttemptReport<A>) => void;
}

export interface RetryOutcome<A extends RetryableAnswer> {
  /** The last attempt's answer; undefined when it got none (network error or timeout). */
  readonly result: A | undefined;
  /** True when `result` is the operation's final answer (success or a 4xx); false when the run gave up first. */
  readonly final: boolean;
  readonly attempts: number;
  readonly networkErrors: number;
}

/**
 * Sends the same request (the caller keeps its Idempotency-Key) until it gets a final answer or the
 * policy gives up. `send` rejects only when no answer arrived: a network error or a timeout.
 *
 * @example
 * const outcome = await sendWithRetries(() => client.post(key, pago), { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 8_000, random: Math.random });
 */
export async function sendWithRetries<A extends RetryableAnswer>(
  send: () => Promise<A>,
  policy: RetryPolicy,
  environment: RetryEnvironment<A> = {},
): Promise<RetryOutcome<A>> {
  const { sleep = wait, now = Date.now, onAttempt } = environment;
  let networkErrors = 0;
  let result: A | undefined;
  for (let attempt = 1; ; attempt++) {
    let error: Error | undefined;
    try {
      result = await send();
    } catch (failure) {
      result = undefined;
      error = failure as Error;
      networkErrors++;
    }
    const decision = decideRetry(attempt, result, policy, now());
    onAttempt?.({ attempt, answer: result, error, decision });
    if (!decision.retry) return { result, final: decision.reason === 'final-answer', attempts: attempt, networkErrors };
    await sleep(decision.delayMs);
  }
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
