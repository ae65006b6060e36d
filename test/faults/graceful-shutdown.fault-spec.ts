import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { chargesOfPagoSql, countCharges, countPagos } from '../support/ledger.js';
import { type HttpResult, nuevoPago, type PagoBody, postPago } from '../support/http.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil, within } from '../support/waiting.js';

/**
 * SIGTERM with payments in flight, as an orchestrator stopping a replica. Real: the built service
 * as its own OS process, the signal, PostgreSQL; the gateway takes 800 ms, so every request is
 * inside the gateway call when the signal arrives. The scenario runs once; each test checks one rule.
 */
const IN_FLIGHT = 20;
const LATE = 6;
// Half go out while the in-flight requests still run, half once they have been answered.
const LATE_BEFORE_ANSWERS = 3;
// Every answer and the exit must come within this: a hang is a failure, not a slow pass.
const DEADLINE_MS = 15_000;
const DRAIN_LOG_LINE = 'SIGTERM: finishing in-flight requests';

interface Operation {
  readonly key: string;
  readonly body: PagoBody;
}

type LateOutcome = { readonly refused: string } | { readonly answer: HttpResult };

describe('SIGTERM with requests in flight', () => {
  let url: string;
  let db: pg.Client;
  const processes: AppProcess[] = [];
  const inFlight: Operation[] = Array.from({ length: IN_FLIGHT }, () => ({ key: randomUUID(), body: nuevoPago() }));
  const late: Operation[] = Array.from({ length: LATE }, () => ({ key: randomUUID(), body: nuevoPago() }));
  let inFlightAnswers: HttpResult[];
  let lateOutcomes: LateOutcome[];
  let exitCode: number | null;
  let answeredMs: number;
  let exitMs: number;

  beforeAll(async () => {
    url = await createTestDatabase('fault_graceful_shutdown');
    db = await connect(url);
    const service = await startAppProcess(url, { GATEWAY_LATENCY_MS: '800' });
    processes.push(service);

    const running = inFlight.map((op) => within(postPago(service.baseUrl, { client: ALICE, ...op }), DEADLINE_MS));
    // All claimed and their payments started: every one is inside the gateway call.
    await waitUntil(async () => (await countPagos(db, `estado = 'PENDIENTE' AND numero_orden = ANY($1::text[])`, [orders(inFlight)])) === IN_FLIGHT);
    const signalledAt = Date.now();
    const exited = within(service.stop('SIGTERM'), DEADLINE_MS);
    // Only once the service says it is draining do the late requests go out: they must not be served.
    await waitUntil(async () => service.output().includes(DRAIN_LOG_LINE));
    lateOutcomes = await Promise.all(late.slice(0, LATE_BEFORE_ANSWERS).map((op) => sendLate(service.baseUrl, op)));
    inFlightAnswers = await Promise.all(running);
    answeredMs = Date.now() - signalledAt;
    // Now the client holds idle keep-alive connections to the draining process: new requests may reuse them.
    lateOutcomes.push(...(await Promise.all(late.slice(LATE_BEFORE_ANSWERS).map((op) => sendLate(service.baseUrl, op)))));
    exitCode = await exited;
    exitMs = Date.now() - signalledAt;
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all(processes.map((service) => service.stop('SIGKILL')));
  });

  it('every request in flight at SIGTERM finishes with 201 and an approved payment', () => {
    expect(inFlightAnswers.map((answer) => answer.status)).toEqual(inFlight.map(() => 201));
    expect(inFlightAnswers.map((answer) => answer.json.estado)).toEqual(inFlight.map(() => 'APROBADO'));
  });

  it('requests sent after SIGTERM are refused cleanly: connection refused or 503 problem+json with Retry-After, never served', async () => {
    for (const outcome of lateOutcomes) {
      if ('refused' in outcome) {
        expect(outcome.refused).toBe('fetch failed');
        continue;
      }
      expect(outcome.answer.status).toBe(503);
      expect(outcome.answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(outcome.answer.headers.get('retry-after')).toBe('1');
      expect(outcome.answer.json).toMatchObject({ status: 503, type: expect.stringContaining('shutting-down') });
    }
    expect(await countPagos(db, `numero_orden = ANY($1::text[])`, [orders(late)])).toBe(0);
    expect((await db.query(`SELECT key FROM idempotency_keys WHERE key = ANY($1::text[])`, [late.map((op) => op.key)])).rows).toEqual([]);
  });

  it('the process exits with code 0 and leaves no claim in flight', async () => {
    expect(exitCode).toBe(0);
    expect((await db.query(`SELECT key, status FROM idempotency_keys WHERE status <> 'completed'`)).rows).toEqual([]);
    expect(await countPagos(db, `estado = 'PENDIENTE'`)).toBe(0);
  });

  it('charges equal completed operations: one approved charge per order answered 201', async () => {
    const completed = inFlightAnswers.filter((answer) => answer.status === 201).length;
    expect(await countCharges(db)).toBe(completed);
    const { rows } = await db.query(
      `SELECT p.numero_orden AS "numeroOrden", sum(${chargesOfPagoSql('p')})::int AS charges
         FROM pagos p WHERE p.numero_orden = ANY($1::text[]) GROUP BY p.numero_orden ORDER BY 1`,
      [orders(inFlight)],
    );
    expect(rows).toEqual(orders(inFlight).sort().map((numeroOrden) => ({ numeroOrden, charges: 1 })));
    const refused = lateOutcomes.filter((outcome) => 'refused' in outcome).length;
    const keptAlive = inFlightAnswers.filter((answer) => answer.headers.get('connection') === 'keep-alive').length;
    console.log(
      `graceful-shutdown: inFlight=${IN_FLIGHT} completed201=${completed} late=${LATE} lateRefusedConnection=${refused} late503=${LATE - refused} exitCode=${exitCode} lastAnswerMs=${answeredMs} exitMs=${exitMs} answersKeepAlive=${keptAlive} charges=${await countCharges(db)}`,
    );
  });

  it('answers finished during the drain were stored: a fresh process replays them byte for byte without charging', async () => {
    const fresh = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false' });
    processes.push(fresh);
    const chargesBefore = await countCharges(db);
    const replays = await Promise.all(inFlight.map((op) => within(postPago(fresh.baseUrl, { client: ALICE, ...op }), DEADLINE_MS)));
    expect(replays.map((replay) => replay.status)).toEqual(inFlight.map(() => 201));
    expect(replays.map((replay) => replay.text)).toEqual(inFlightAnswers.map((answer) => answer.text));
    expect(replays.map((replay) => replay.headers.get('idempotent-replayed'))).toEqual(inFlight.map(() => 'true'));
    expect(await countCharges(db)).toBe(chargesBefore);
    expect(await fresh.stop('SIGTERM')).toBe(0);
  });
});

async function sendLate(baseUrl: string, op: Operation): Promise<LateOutcome> {
  try {
    return { answer: await within(postPago(baseUrl, { client: ALICE, ...op }), DEADLINE_MS) };
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

function orders(operations: readonly Operation[]): string[] {
  return operations.map((op) => op.body.numeroOrden);
}
