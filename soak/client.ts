import { randomUUID } from 'node:crypto';
import { decideRetry, type RetryPolicy } from '../examples/client/retry-policy.js';
import { type Answer, type Recorder, send } from './recorder.js';

/**
 * One simulated mobile client: pays new orders until `until`, with the example client's retry
 * policy (same key after a timeout, a 5xx or a key in flight, backoff with jitter, `Retry-After`),
 * sometimes double-tapping, asking `Prefer: wait`, abandoning mid-retry, authenticating 3-D Secure
 * through the processor's test route, reading payments back, and refunding part of what it paid.
 */
export interface ClientContext {
  readonly id: number;
  readonly random: () => number;
  readonly recorder: Recorder;
  /** The service as the client reaches it (through the proxy that drops answers). */
  readonly serviceUrl: string;
  readonly token: string;
  readonly processorUrl: string;
  readonly processorKey: string;
  readonly seed: number;
}

const TOKENS: Array<[string, number]> = [
  ['tok_visa', 0.55],
  ['tok_chargeDeclined', 0.15],
  ['tok_chargeDeclinedProcessingError', 0.1],
  ['pm_card_authenticationRequired', 0.2],
];
const ANSWER_TIMEOUT_MS = 15_000;
// A connection the client itself drops before the answer arrives (the app killed, the tunnel entered).
const DROP_BEFORE_ANSWER = 0.03;
const ABANDON = 0.04;
const DOUBLE_TAP = 0.08;
const READ_BACK = 0.2;

export async function runClient(context: ClientContext, until: number): Promise<void> {
  for (let order = 1; Date.now() < until; order += 1) {
    await payOrder(context, `ORD-s${context.seed}-c${context.id}-${order}`);
  }
}

async function payOrder(context: ClientContext, numeroOrden: string): Promise<void> {
  const { random } = context;
  const token = pick(random, TOKENS);
  const monto = 500 + Math.floor(random() * 4500);
  const answer = await operate(context, '/pagos', { numeroOrden, monto, moneda: 'EUR', token });
  if (answer?.status === 202) return authenticate(context, answer);
  if (answer?.status !== 201) return;
  const pagoId = (answer.json as { id: string }).id;
  if (random() < READ_BACK) await read(context, `/pagos/${pagoId}`);
  let left = monto;
  while (left > 0 && random() < 0.4) {
    const part = 1 + Math.floor(random() * Math.min(left, 2000));
    // 13 is the local processor's failing refund; the soak's refunds are ordinary ones.
    const monto = part === 13 ? 14 : part;
    const refund = await operate(context, `/pagos/${pagoId}/reembolsos`, { monto });
    if (refund?.status === 201 || refund?.status === 202) left -= monto;
    else break;
  }
}

/** The customer at the bank: authenticates, fails, or never comes back (the reconciler's timeout). */
async function authenticate(context: ClientContext, answer: Answer): Promise<void> {
  const draw = context.random();
  if (draw < 0.1) return;
  const { id, autenticacion } = answer.json as { id: string; autenticacion: { clientSecret: string } };
  const intent = autenticacion.clientSecret.split('_secret_')[0]!;
  await send(`${context.processorUrl}/v1/test_helpers/payment_intents/${intent}/authenticate`, 'POST', { authorization: `Bearer ${context.processorKey}`, 'content-type': 'application/x-www-form-urlencoded' }, `outcome=${draw < 0.75 ? 'success' : 'failure'}`, ANSWER_TIMEOUT_MS);
  await read(context, `/pagos/${id}`, { prefer: 'wait=5' });
}

/** A read, recorded like any operation: the checker holds what it showed against the final state. */
async function read(context: ClientContext, path: string, headers: Record<string, string> = {}): Promise<void> {
  const { recorder } = context;
  const op = recorder.newOp();
  recorder.add({ t: 'invoke', op, client: context.id, at: Date.now(), method: 'GET', path });
  const answer = await send(`${context.serviceUrl}${path}`, 'GET', { authorization: `Bearer ${context.token}`, ...headers }, undefined, ANSWER_TIMEOUT_MS);
  recordAnswer(recorder, op, answer, 'no answer');
}

/** One operation under one key, retried as the example client does; resolves the final answer, if any. */
async function operate(context: ClientContext, path: string, body: Record<string, unknown>): Promise<Answer | undefined> {
  const { random } = context;
  const key = randomUUID();
  const policy: RetryPolicy = { maxAttempts: 10, baseDelayMs: 200, maxDelayMs: 4_000, maxRetryAfterMs: 20_000, random };
  for (let attempt = 1; ; attempt += 1) {
    const tap = attempt === 1 && random() < DOUBLE_TAP ? [attempt, attempt] : [attempt];
    const answers = await Promise.all(tap.map(() => attemptOnce(context, path, key, body)));
    const answer = answers.find((each) => each !== undefined && each.status < 400) ?? answers[0];
    const decision = decideRetry(attempt, answer, policy, Date.now());
    if (!decision.retry) return answer;
    if (random() < ABANDON) return undefined;
    await new Promise((resolve) => setTimeout(resolve, decision.delayMs));
  }
}

async function attemptOnce(context: ClientContext, path: string, key: string, body: Record<string, unknown>): Promise<Answer | undefined> {
  const { recorder, random } = context;
  const op = recorder.newOp();
  const dropBefore = random() < DROP_BEFORE_ANSWER;
  const timeoutMs = dropBefore ? 5 + Math.floor(random() * 200) : ANSWER_TIMEOUT_MS;
  const headers: Record<string, string> = { authorization: `Bearer ${context.token}`, 'idempotency-key': key, ...(random() < 0.3 && { prefer: 'wait=3' }) };
  recorder.add({ t: 'invoke', op, client: context.id, at: Date.now(), method: 'POST', path, key, body });
  if (dropBefore) recorder.fault('client-drop-before-answer', `op ${op}`);
  const answer = await send(`${context.serviceUrl}${path}`, 'POST', headers, JSON.stringify(body), timeoutMs);
  recordAnswer(recorder, op, answer, dropBefore ? 'dropped by the client before the answer' : 'no answer');
  return answer;
}

function recordAnswer(recorder: Recorder, op: number, answer: Answer | undefined, lostReason: string): void {
  if (answer) recorder.add({ t: 'complete', op, at: Date.now(), status: answer.status, replayed: answer.headers.get('idempotent-replayed') === 'true', body: answer.body });
  else recorder.add({ t: 'lost', op, at: Date.now(), reason: lostReason });
}

function pick<T>(random: () => number, weighted: Array<[T, number]>): T {
  let draw = random();
  for (const [value, weight] of weighted) {
    if ((draw -= weight) < 0) return value;
  }
  return weighted[weighted.length - 1]![0];
}
