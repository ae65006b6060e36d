import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { sendWithRetries } from '../../examples/client/send-with-retries.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { startProcessorProcess, type ProcessorProcess } from '../support/processor-process.js';
import { ALICE } from '../support/clients.js';
import { chargesOfPagoSql, countCharges } from '../support/ledger.js';
import { type HttpResult, nuevoPago, type PagoBody, postPago } from '../support/http.js';
import { seededRandom } from '../support/seeded-random.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil, within } from '../support/waiting.js';

/**
 * The database goes away under a running service. Real: the built service as its own OS process,
 * PostgreSQL, and a loopback TCP proxy between them that the test cuts (every connection dropped,
 * new ones refused) and restores; or PostgreSQL itself terminating the service's backends.
 * The lock timeout is 2 s so that claims a lost database kept from releasing expire during the retries.
 */
describe('when the service loses its database', () => {
  const OPERATIONS = 20;
  // Every request, first or retried, must get an answer within this: a hang is a failure.
  const ANSWER_DEADLINE_MS = 15_000;
  const SERVICE_ERRORS = [500, 502, 503];

  let url: string;
  let db: pg.Client;
  let proxy: TcpProxy;
  let service: AppProcess;
  let processor: ProcessorProcess;

  beforeAll(async () => {
    url = await createTestDatabase('fault_database_loss');
    let viaProxy: string;
    ({ proxy, viaProxy } = await TcpProxy.inFrontOf(url));
    // The processor is another company's: our database going away leaves it up, so it runs apart, on its own connection.
    processor = await startProcessorProcess(url, { GATEWAY_LATENCY_MS: '300' });
    service = await startAppProcess(viaProxy, { ...processor.serviceEnv, IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: '2' });
    db = await connect(url);
  });

  afterEach(async () => {
    if (proxy?.isCut) await proxy.restore();
  });

  afterAll(async () => {
    await db?.end();
    await service?.stop('SIGKILL');
    await processor?.stop('SIGKILL');
    await proxy?.cut();
  });

  // Fails with the end of the service's log, which says why it died.
  const expectServiceUp = () => {
    const { exitCode, signalCode } = service.child;
    if (exitCode !== null || signalCode !== null) {
      throw new Error(`the service exited (code ${exitCode}, signal ${signalCode}); its last output:\n${service.output().slice(-3000)}`);
    }
  };

  it('while the database is cut and the service idle, requests get 503 problem+json with Retry-After, the service stays up, and the same keys succeed once it is back', async () => {
    const operations = Array.from({ length: 3 }, () => ({ key: randomUUID(), body: nuevoPago() }));
    await proxy.cut();
    const during = await Promise.all(operations.map((op) => within(postPago(service.baseUrl, { client: ALICE, ...op }), ANSWER_DEADLINE_MS)));
    for (const answer of during) {
      expect(answer.status).toBe(503);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.headers.get('retry-after')).toBe('2');
      expect(answer.json).toMatchObject({ status: 503, type: expect.stringContaining('service-unavailable') });
    }
    expectServiceUp();
    expect(await countCharges(db)).toBe(0);

    await proxy.restore();
    const after = await Promise.all(operations.map((op) => within(postPago(service.baseUrl, { client: ALICE, ...op }), ANSWER_DEADLINE_MS)));
    expect(after.map((answer) => answer.status)).toEqual(operations.map(() => 201));
    const replays = await Promise.all(operations.map((op) => postPago(service.baseUrl, { client: ALICE, ...op })));
    expect(replays.map((replay) => replay.text)).toEqual(after.map((answer) => answer.text));
    await expectExactlyOnce(db, operations);
    console.log(`[database-loss a: cut while idle] operations=${operations.length} attempts=${2 * operations.length} 503s=${during.length} charges=${await chargesOf(db, operations)}`);
  });

  it('a cut with requests in flight gets each an answer (201 or a 5xx problem), and retries with the same keys end with exactly one charge per operation and nothing half-done', async () => {
    const tally = new Tally();
    const operations = Array.from({ length: OPERATIONS }, () => ({ key: randomUUID(), body: nuevoPago() }));
    const random = seededRandom(20261202);
    const logBefore = service.output().length;
    // Staggered over 800 ms, so that the cut finds operations done, charged, in the gateway, and not yet claimed.
    const first = operations.map((op) => delay(Math.floor(random() * 800)).then(() => tally.first(service.baseUrl, op, ANSWER_DEADLINE_MS)));
    await waitUntil(() => chargesOf(db, operations).then((n) => n >= OPERATIONS / 4));
    await proxy.cut();
    const firstResults = await Promise.all(first);
    expectServiceUp();
    const firstAnswers = expectAllAnswered(firstResults);
    expectEachIs201OrServiceError(firstAnswers, SERVICE_ERRORS);
    expect(firstAnswers.some((answer) => answer.status !== 201)).toBe(true);
    const chargedBeforeRestore = await chargesOf(db, operations);

    const unreleased = countOccurrences(service.output().slice(logBefore), 'could not release key');
    await proxy.restore();
    const retried = await retryAll(service.baseUrl, operations, tally, seededRandom(7));
    expect(retried.map((outcome) => outcome.result?.status)).toEqual(operations.map(() => 201));
    expectServiceUp();
    await expectExactlyOnce(db, operations);
    await expectNothingHalfDone(db, operations);
    console.log(`[database-loss b: proxy cut with ${OPERATIONS} in flight] operations=${OPERATIONS} firstAnswers=${statusCounts(firstAnswers)} chargedBeforeRestore=${chargedBeforeRestore} claimsNotReleased=${unreleased} ${tally.summary()} charges=${await chargesOf(db, operations)}`);
  });

  it('PostgreSQL terminating the service\'s connections mid-request gets each an answer, and retries with the same keys end with exactly one charge per operation and nothing half-done', async () => {
    const tally = new Tally();
    const operations = Array.from({ length: OPERATIONS }, () => ({ key: randomUUID(), body: nuevoPago() }));
    const random = seededRandom(42);
    const logBefore = service.output().length;
    const first = operations.map((op) => delay(Math.floor(random() * 800)).then(() => tally.first(service.baseUrl, op, ANSWER_DEADLINE_MS)));
    // From the first charge until every first attempt has its answer, the backends are terminated every 25 ms.
    await waitUntil(() => chargesOf(db, operations).then((n) => n >= 1));
    let answered = false;
    void Promise.all(first).finally(() => (answered = true));
    let terminated = 0;
    let rounds = 0;
    for (; !answered && rounds < 400; rounds++) {
      terminated += await terminateServiceBackends(db);
      await delay(25);
    }
    const firstResults = await Promise.all(first);
    expectServiceUp();
    const firstAnswers = expectAllAnswered(firstResults);
    expectEachIs201OrServiceError(firstAnswers, SERVICE_ERRORS);
    expect(terminated).toBeGreaterThan(0);
    expect(firstAnswers.some((answer) => answer.status !== 201)).toBe(true);
    const unreleased = countOccurrences(service.output().slice(logBefore), 'could not release key');

    const retried = await retryAll(service.baseUrl, operations, tally, seededRandom(8));
    expect(retried.map((outcome) => outcome.result?.status)).toEqual(operations.map(() => 201));
    expectServiceUp();
    await expectExactlyOnce(db, operations);
    await expectNothingHalfDone(db, operations);
    console.log(`[database-loss c: pg_terminate_backend every 25 ms with ${OPERATIONS} in flight] operations=${OPERATIONS} rounds=${rounds} backendsTerminated=${terminated} claimsNotReleased=${unreleased} firstAnswers=${statusCounts(firstAnswers)} ${tally.summary()} charges=${await chargesOf(db, operations)}`);
  });
});

interface Operation {
  readonly key: string;
  readonly body: PagoBody;
}

/** Every answer the service gave, first attempts and retries alike, by status. */
class Tally {
  attempts = 0;
  readonly statuses = new Map<number, number>();

  async send(baseUrl: string, op: Operation, deadlineMs: number): Promise<HttpResult> {
    this.attempts++;
    const answer = await within(postPago(baseUrl, { client: ALICE, ...op }), deadlineMs);
    this.statuses.set(answer.status, (this.statuses.get(answer.status) ?? 0) + 1);
    return answer;
  }

  /** A first attempt: a network failure is kept as a value, to be reported with the service's state. */
  first(baseUrl: string, op: Operation, deadlineMs: number): Promise<HttpResult | Error> {
    return this.send(baseUrl, op, deadlineMs).catch((error: unknown) => error as Error);
  }

  summary(): string {
    const s = (status: number) => this.statuses.get(status) ?? 0;
    return `attempts=${this.attempts} 201s=${s(201)} 503s=${s(503)} 500s=${s(500)} 502s=${s(502)} 409s=${s(409)}`;
  }
}

function retryAll(baseUrl: string, operations: readonly Operation[], tally: Tally, random: () => number) {
  return Promise.all(
    operations.map((op) => sendWithRetries(() => tally.send(baseUrl, op, 15_000), { maxAttempts: 12, baseDelayMs: 100, maxDelayMs: 2_000, random })),
  );
}

/** Every request got an HTTP answer: no connection failure, no hang. */
function expectAllAnswered(results: readonly (HttpResult | Error)[]): HttpResult[] {
  expect(results.filter((result) => result instanceof Error).map((error) => error.message)).toEqual([]);
  return results as HttpResult[];
}

function expectEachIs201OrServiceError(answers: readonly HttpResult[], serviceErrors: readonly number[]): void {
  for (const answer of answers) {
    if (answer.status === 201) continue;
    expect(serviceErrors).toContain(answer.status);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.json).toMatchObject({ status: answer.status, type: expect.any(String), detail: expect.any(String) });
    if (answer.status === 503) expect(answer.headers.get('retry-after')).toBe('2');
  }
}

/** One payment per order, approved, charged exactly once under its operation's charge key. */
async function expectExactlyOnce(db: pg.Client, operations: readonly Operation[]): Promise<void> {
  const { rows } = await db.query(
    `SELECT o.numero_orden AS "numeroOrden",
            (SELECT count(*)::int FROM pagos p WHERE p.client_id = $2 AND p.numero_orden = o.numero_orden) AS pagos,
            (SELECT coalesce(sum(${chargesOfPagoSql('p')}), 0)::int FROM pagos p WHERE p.client_id = $2 AND p.numero_orden = o.numero_orden) AS charges,
            (SELECT string_agg(p.estado, ',') FROM pagos p WHERE p.client_id = $2 AND p.numero_orden = o.numero_orden) AS estados
       FROM unnest($1::text[]) AS o(numero_orden) ORDER BY 1`,
    [operations.map((op) => op.body.numeroOrden), ALICE.clientId],
  );
  expect(rows).toEqual([...operations].map((op) => ({ numeroOrden: op.body.numeroOrden, pagos: 1, charges: 1, estados: 'APROBADO' }))
    .sort((a, b) => (a.numeroOrden < b.numeroOrden ? -1 : 1)));
}

/** No claim left in flight or released, no payment left PENDIENTE, for these operations. */
async function expectNothingHalfDone(db: pg.Client, operations: readonly Operation[]): Promise<void> {
  const keys = await db.query(`SELECT key, status FROM idempotency_keys WHERE scope = $1 AND key = ANY($2::text[]) AND status <> 'completed'`, [
    ALICE.clientId, operations.map((op) => op.key),
  ]);
  expect(keys.rows).toEqual([]);
  const pendientes = await db.query(`SELECT numero_orden FROM pagos WHERE client_id = $1 AND numero_orden = ANY($2::text[]) AND estado = 'PENDIENTE'`, [
    ALICE.clientId, operations.map((op) => op.body.numeroOrden),
  ]);
  expect(pendientes.rows).toEqual([]);
}

function chargesOf(db: pg.Client, operations: readonly Operation[]): Promise<number> {
  return countCharges(db, `operation_key IN (SELECT 'pagos-' || operation_id FROM pagos WHERE client_id = $1 AND numero_orden = ANY($2::text[]))`, [
    ALICE.clientId, operations.map((op) => op.body.numeroOrden),
  ]);
}

async function terminateServiceBackends(db: pg.Client): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n
       FROM pg_stat_activity WHERE application_name = 'pagos' AND datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return rows[0].n;
}

function countOccurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

function statusCounts(answers: readonly HttpResult[]): string {
  const counts = new Map<number, number>();
  for (const answer of answers) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a - b).map(([status, n]) => `${status}:${n}`).join(',');
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
