import { type Authentication, nextWaitStep, type PagoReading, preferWaitSeconds, readPagoAnswer } from './authentication-policy.js';
import type { FetchLike, PagosAnswer, PagosClient } from './pagos-client.js';

/**
 * A payment that waits for its customer's 3-D Secure: the challenge, played through the local
 * processor's test route (a real app hands the client secret to Stripe's SDK instead), and the wait
 * for the outcome with `GET /pagos/{id}`.
 */

/** How the customer's challenge ends at the local processor: `ok` authenticates, `falla` fails it. */
export type ChallengeOutcome = 'ok' | 'falla';

const PROCESSOR_OUTCOME: Record<ChallengeOutcome, string> = { ok: 'success', falla: 'failure' };
// The local processor takes any test key; it is not a secret and moves no money.
const LOCAL_PROCESSOR_KEY = 'sk_test_pagos_example_client';
const CHALLENGE_TIMEOUT_MS = 15_000;

/**
 * The customer's answer to the bank's challenge, through the local processor's local-only route
 * `POST /v1/test_helpers/payment_intents/{id}/authenticate`. Throws when it is not answered 2xx (a
 * real Stripe account has no such route: there the customer authenticates in the app).
 *
 * @example
 * await completeChallenge('http://127.0.0.1:12111', 'pi_3QxAbc', 'ok');
 */
export async function completeChallenge(processorUrl: string, intentId: string, outcome: ChallengeOutcome, fetchLike: FetchLike = fetch): Promise<void> {
  const url = new URL(`/v1/test_helpers/payment_intents/${encodeURIComponent(intentId)}/authenticate`, processorUrl).toString();
  const response = await fetchLike(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${LOCAL_PROCESSOR_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: `outcome=${PROCESSOR_OUTCOME[outcome]}`,
    signal: AbortSignal.timeout(CHALLENGE_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`the processor answered ${response.status} to the challenge of ${intentId}: ${text}`);
}

export interface OutcomeWait {
  /** The last reading: the payment's state when it was decided or the time ran out. */
  readonly reading: PagoReading;
  readonly reason: 'decided' | 'refused' | 'deadline';
  /** The last answer, as served. */
  readonly answer: PagosAnswer | undefined;
}

export interface WaitEnvironment {
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/**
 * Asks `GET /pagos/{id}` with `Prefer: wait` until the payment is decided, the service refuses to say
 * (401, 404) or `withinMs` passed. Works with a service that holds the request and with one that
 * answers at once (then about once a second).
 *
 * @example
 * const { reading } = await waitForOutcome(client, authentication.pagoId, 60_000);
 */
export async function waitForOutcome(client: PagosClient, pagoId: string, withinMs: number, environment: WaitEnvironment = {}): Promise<OutcomeWait> {
  const { sleep = wait, now = Date.now } = environment;
  const deadline = now() + withinMs;
  for (;;) {
    const sentAt = now();
    const answer = await client.getPago(pagoId, preferWaitSeconds(deadline - sentAt)).catch(() => undefined);
    const reading = readPagoAnswer(answer);
    const step = nextWaitStep(reading, now() - sentAt, deadline - now());
    if (step.done) return { reading, reason: step.reason, answer };
    if (step.pauseMs > 0) await sleep(step.pauseMs);
  }
}

/** The hand-off a real app does: the instructions printed when no challenge is played here. */
export function handOffText(authentication: Authentication): string {
  return (
    `authentication required (3-D Secure) for payment ${authentication.pagoId}, until ${authentication.expiraEn}:\n` +
    `a real app hands autenticacion.clientSecret to Stripe's SDK (handleNextAction), the customer answers the bank,\n` +
    `and the outcome reaches the service by Stripe's webhook`
  );
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
