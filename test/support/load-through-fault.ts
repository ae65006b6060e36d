import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import { sendWithRetries } from '../../examples/client/send-with-retries.js';
import type { AppProcess } from './app-process.js';
import { ALICE } from './clients.js';
import { get, type HttpResult, nuevoPago, type PagoBody, postPago } from './http.js';
import { seededRandom } from './seeded-random.js';
import { waitFor, within } from './waiting.js';

/**
 * Payments under load through a fault of the database (test/faults/failover.fault-spec.ts): clients
 * retrying with their keys, a probe paying every 100 ms that measures the write gap, readiness polled.
 */
const CLIENTS = 6;
const PROBE_INTERVAL_MS = 100;
const ANSWER_DEADLINE_MS = 20_000;

export interface Operation {
  readonly key: string;
  readonly body: PagoBody;
  /** Its final answer (201 or 402), the one every retry must replay; undefined when it got none. */
  final?: HttpResult;
}

interface Attempt {
  readonly start: number;
  readonly end: number;
  readonly status: number | undefined;
  /** The body of an answer that was neither a 201, a 402 nor a 503: what the test prints when it fails. */
  readonly unexpected?: string;
}

export interface LoadRun {
  readonly operations: number;
  readonly attempts: readonly Attempt[];
  readonly probes: readonly Attempt[];
  readonly faultAt: number;
  /** How long writes were refused: from the start of the first attempt refused after the fault to the end of the last. */
  readonly gapMs: number;
  /** Every status /health/ready answered during the run, in order, repeats collapsed. */
  readonly readiness: readonly (number | undefined)[];
  /** Where the service's output stood when the run began. */
  readonly logFrom: number;
}

/**
 * CLIENTS clients pay (one in five with a card that is declined) and retry each operation with its
 * key until it gets a final answer; a probe pays with a new key every 100 ms and never retries;
 * readiness is polled. `fault` runs once the load is going; the load stops when writes have been
 * back for 3 s.
 */
export async function underLoad(service: AppProcess, operations: Operation[], fault: () => Promise<number>, resumeWithinMs: number): Promise<LoadRun> {
  const baseUrl = service.baseUrl;
  const attempts: Attempt[] = [];
  const probes: Attempt[] = [];
  const readiness: (number | undefined)[] = [];
  let stopping = false;
  const timed = async (send: () => Promise<HttpResult>, into: Attempt[]) => {
    const start = Date.now();
    try {
      const answer = await within(send(), ANSWER_DEADLINE_MS);
      into.push({ start, end: Date.now(), status: answer.status, ...(![201, 402, 503].includes(answer.status) && { unexpected: answer.text }) });
      return answer;
    } catch (error) {
      into.push({ start, end: Date.now(), status: undefined });
      throw error;
    }
  };
  const client = async (index: number) => {
    const random = seededRandom(1000 + index);
    for (let n = 0; !stopping; n++) {
      const op: Operation = { key: randomUUID(), body: nuevoPago(n % 5 === 4 ? { token: 'tok_chargeDeclined' } : {}) };
      operations.push(op);
      const outcome = await sendWithRetries(() => timed(() => postPago(baseUrl, { client: ALICE, key: op.key, body: op.body }), attempts), {
        maxAttempts: 100, baseDelayMs: 100, maxDelayMs: 1_000, random,
      });
      if (outcome.final) op.final = outcome.result;
      expect({ key: op.key, final: outcome.final, settled: isSettled(outcome.result?.status) }).toEqual({ key: op.key, final: true, settled: true });
    }
  };
  const probe = async () => {
    while (!stopping) {
      const op: Operation = { key: randomUUID(), body: nuevoPago() };
      operations.push(op);
      const answer = await timed(() => postPago(baseUrl, { client: ALICE, key: op.key, body: op.body }), probes).catch(() => undefined);
      if (answer !== undefined && [201, 402].includes(answer.status)) op.final = answer;
      await delay(PROBE_INTERVAL_MS);
    }
  };
  const watchReadiness = async () => {
    while (!stopping) {
      const status = await get(baseUrl, '/health/ready').then((r) => r.status, () => undefined);
      if (readiness.at(-1) !== status) readiness.push(status);
      await delay(200);
    }
  };
  const before = operations.length;
  const logFrom = service.output().length;
  const running = [...Array.from({ length: CLIENTS }, (_, i) => client(i)), probe(), watchReadiness()];
  let faultAt = 0;
  try {
    await delay(2_000);
    faultAt = await fault();
    // Sent once the fault has done its work (a new leader elected, the switchover over): writes are back.
    const faultDone = Date.now();
    await waitFor('a probe write after the fault', () => probes.find((p) => p.start > faultDone && isSettled(p.status)), resumeWithinMs + 30_000, 50);
    await delay(3_000);
    stopping = true;
    await Promise.all(running);
    return { operations: operations.length - before, attempts, probes, faultAt, gapMs: refusalWindow([...attempts, ...probes], faultAt), readiness, logFrom };
  } finally {
    stopping = true;
    await Promise.allSettled(running);
  }
}

function refusalWindow(attempts: readonly Attempt[], faultAt: number): number {
  const refused = attempts.filter((a) => a.end >= faultAt && !isSettled(a.status) && a.status !== 409);
  if (refused.length === 0) return 0;
  return Math.max(...refused.map((a) => a.end)) - Math.min(...refused.map((a) => a.start));
}

function isSettled(status: number | undefined): boolean {
  return status === 201 || status === 402;
}

export function report(label: string, run: LoadRun): void {
  const statuses = new Map<string, number>();
  for (const a of [...run.attempts, ...run.probes]) statuses.set(String(a.status ?? 'none'), (statuses.get(String(a.status ?? 'none')) ?? 0) + 1);
  console.log(
    `[failover: ${label}] operations=${run.operations} attempts=${run.attempts.length + run.probes.length} ` +
      `statuses=${[...statuses].map(([s, n]) => `${s}:${n}`).join(',')} writeGapMs=${run.gapMs} ` +
      `readiness=${run.readiness.map((s) => s ?? 'none').join('→')}`,
  );
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
