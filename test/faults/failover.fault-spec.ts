import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { sendWithRetries } from '../../examples/client/send-with-retries.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { get, type HttpResult, nuevoPago, type PagoBody, postJson, postPago } from '../support/http.js';
import { PatroniCluster } from '../support/patroni-cluster.js';
import { startProcessorProcess, type ProcessorProcess } from '../support/processor-process.js';
import { describeWhenAvailable, PATRONI } from '../support/requirements.js';
import { seededRandom } from '../support/seeded-random.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { eventually, waitFor, within } from '../support/waiting.js';
import { WebhookConsumer } from '../support/webhook-consumer.js';

/**
 * The service's PostgreSQL is a Patroni pair (a leader and its synchronous standby) behind HAProxy,
 * as in docker-compose.yml's `ha` profile. Real: etcd, two Patroni nodes with their PostgreSQL,
 * HAProxy, the built service and the local processor as OS processes on loopback ports. Clients pay
 * and retry with the same keys while the leader's machine dies (Patroni and PostgreSQL SIGKILLed) and,
 * in the second case, while the leader hands over in a planned switchover. The processor's database
 * is the machine's PostgreSQL, apart from the cluster: its ledger is the truth the service's
 * records are checked against. The write gap is measured by a probe paying with a new key every
 * 100 ms, and printed (docs/failure-model.md), never asserted beyond a generous bound.
 */
const CLIENTS = 6;
const PROBE_INTERVAL_MS = 100;
const ANSWER_DEADLINE_MS = 20_000;
// Generous sanity bounds, not measurements: a failover that takes longer than this is broken.
const WRITES_RESUME_WITHIN_MS = 60_000;

describeWhenAvailable(PATRONI, 'when the primary is lost under load (Patroni, a synchronous standby, HAProxy)', () => {
  let cluster: PatroniCluster;
  let processor: ProcessorProcess;
  let processorDb: pg.Client;
  let service: AppProcess;
  let consumer: WebhookConsumer;
  const operations: Operation[] = [];

  beforeAll(async () => {
    cluster = await PatroniCluster.start();
    const admin = await connect(cluster.url());
    await admin.query('CREATE DATABASE pagos');
    await admin.end();
    // The processor is another company's: it stays on the machine's PostgreSQL, outside the failover.
    const processorUrl = await createTestDatabase('failover_processor');
    processor = await startProcessorProcess(processorUrl, { GATEWAY_LATENCY_MS: '150' });
    processorDb = await connect(processorUrl);
    consumer = await new WebhookConsumer().start();
    service = await startAppProcess(cluster.url('pagos'), {
      ...processor.serviceEnv, IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: '2', PAGOS_RECONCILE_CRON: '*/2 * * * * *',
      WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,2,5,10,20', WEBHOOK_TIMEOUT_SECONDS: '2',
    });
    const created = await postJson(service.baseUrl, '/webhooks', { client: ALICE, key: randomUUID(), body: { url: consumer.url, eventos: ['pago.aprobado', 'pago.rechazado'] } });
    expect(created.status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await service?.stop('SIGKILL');
    await processor?.stop('SIGKILL');
    await processorDb?.end();
    await consumer?.stop();
    await cluster?.stop();
  }, 60_000);

  it('the leader commits synchronously: synchronous_commit on and its standby in synchronous_standby_names', async () => {
    const db = await connect(cluster.url('pagos'));
    try {
      const { rows } = await db.query(cluster.leaderSettingsSql());
      expect(rows[0]).toEqual({ names: expect.stringMatching(/node[12]/), commit: 'on', recovery: false });
    } finally {
      await db.end();
    }
  });

  it('the leader SIGKILLed mid-load (Patroni and PostgreSQL): the standby takes over, every operation ends charged at most once, every answer replays, nothing stays PENDIENTE, no event is lost', async () => {
    const run = await underLoad(service, operations, async () => {
      const killed = await cluster.killLeader();
      const faultAt = Date.now();
      // The dead node comes back once the other leads, and rejoins as the synchronous standby.
      await waitFor('a new leader', async () => (await cluster.leader())?.name !== killed.name && (await cluster.leader()) !== undefined, WRITES_RESUME_WITHIN_MS, 200);
      cluster.restartNode(killed);
      return faultAt;
    });
    await cluster.waitForSyncPair();
    expectServiceUp(service);
    report('kill -9 of the leader', run);
    expectListenerBack(service, run.logFrom);
    expect(run.gapMs).toBeLessThan(WRITES_RESUME_WITHIN_MS);
    expect(run.readiness).toContain(503);
    await expectEveryPromiseKept(operations);
  }, 300_000);

  it('a planned switchover mid-load: the same promises, and writes pause only for the handover', async () => {
    const run = await underLoad(service, operations, async () => {
      const faultAt = Date.now();
      await cluster.switchover();
      return faultAt;
    });
    await cluster.waitForSyncPair();
    expectServiceUp(service);
    report('switchover', run);
    expectListenerBack(service, run.logFrom);
    expect(run.gapMs).toBeLessThan(WRITES_RESUME_WITHIN_MS);
    await expectEveryPromiseKept(operations);
  }, 300_000);

  // After a switch: the service's records against the processor's ledger, replays, the reconciler and the events.
  async function expectEveryPromiseKept(ops: readonly Operation[]): Promise<void> {
    const db = await connect(cluster.url('pagos'));
    try {
      // Probes that got a 5xx were never retried: a claim they left is the reconciler's to settle.
      await eventually('no pago left PENDIENTE after the reconciler passes', async () => {
        const { rows } = await db.query(`SELECT count(*)::int AS n FROM pagos WHERE estado = 'PENDIENTE'`);
        return rows[0].n === 0;
      }, 60);
      const pagos = await pagosByOrder(db);
      const charges = await chargesByOperation(processorDb);
      // Every charge in the processor's ledger is one approved pago's, and only one.
      for (const [operationId, count] of charges) {
        expect({ operationId, count }).toEqual({ operationId, count: 1 });
        expect([...pagos.values()].find((p) => p.operationId === operationId)?.estado).toBe('APROBADO');
      }
      for (const op of ops.filter((o) => o.final !== undefined)) {
        const pago = pagos.get(op.body.numeroOrden);
        const expected = op.final!.status === 201 ? { estado: 'APROBADO', charges: 1 } : { estado: 'RECHAZADO', charges: 0 };
        expect({ orden: op.body.numeroOrden, status: op.final!.status, estado: pago?.estado, charges: charges.get(pago?.operationId ?? '') ?? 0 })
          .toEqual({ orden: op.body.numeroOrden, status: op.final!.status, ...expected });
      }
      // Every answered 201/402 is still stored: the same key gets the same bytes.
      const answered = ops.filter((o) => o.final !== undefined);
      const replays = await Promise.all(answered.map((op) => postPago(service.baseUrl, { client: ALICE, key: op.key, body: op.body })));
      expect(replays.map((r) => `${r.status} ${r.text}`)).toEqual(answered.map((op) => `${op.final!.status} ${op.final!.text}`));
      // Every settlement has its event, and the consumer got each one.
      const { rows: settled } = await db.query(
        `SELECT p.id, p.estado, (SELECT array_agg(e.id) FROM eventos e WHERE e.payload->'data'->>'id' = p.id::text AND e.type = lower('pago.' || p.estado)) AS eventos
           FROM pagos p WHERE p.estado IN ('APROBADO', 'RECHAZADO')`,
      );
      expect(settled.filter((row) => row.eventos?.length !== 1)).toEqual([]);
      const eventIds = settled.map((row) => row.eventos[0] as string);
      await eventually('every event delivered to the consumer', async () => {
        const acknowledged = new Set(consumer.acknowledgedIds());
        return eventIds.every((id) => acknowledged.has(id));
      }, 90);
    } finally {
      await db.end();
    }
  }
});

interface Operation {
  readonly key: string;
  readonly body: PagoBody;
  /** Its final answer (201 or 402), the one every retry must replay; undefined when it got none. */
  final?: HttpResult;
}

interface Attempt {
  readonly start: number;
  readonly end: number;
  readonly status: number | undefined;
}

interface LoadRun {
  readonly operations: number;
  readonly attempts: readonly Attempt[];
  readonly probes: readonly Attempt[];
  readonly faultAt: number;
  /** From the fault to the end of the first probe, sent after it, that got its 201 or 402. */
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
async function underLoad(service: AppProcess, operations: Operation[], fault: () => Promise<number>): Promise<LoadRun> {
  const baseUrl = service.baseUrl;
  const attempts: Attempt[] = [];
  const probes: Attempt[] = [];
  const readiness: (number | undefined)[] = [];
  let stopping = false;
  const timed = async (send: () => Promise<HttpResult>, into: Attempt[]) => {
    const start = Date.now();
    try {
      const answer = await within(send(), ANSWER_DEADLINE_MS);
      into.push({ start, end: Date.now(), status: answer.status });
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
    const resumed = await waitFor('a probe write after the fault', () => probes.find((p) => p.start > faultAt && isSettled(p.status)), WRITES_RESUME_WITHIN_MS + 30_000, 50);
    await delay(3_000);
    stopping = true;
    await Promise.all(running);
    return { operations: operations.length - before, attempts, probes, faultAt, gapMs: resumed.end - faultAt, readiness, logFrom };
  } finally {
    stopping = true;
    await Promise.allSettled(running);
  }
}

function isSettled(status: number | undefined): boolean {
  return status === 201 || status === 402;
}

function report(label: string, run: LoadRun): void {
  const after = [...run.attempts, ...run.probes].filter((a) => a.end >= run.faultAt);
  const refused = after.filter((a) => !isSettled(a.status) && a.status !== 409);
  const statuses = new Map<string, number>();
  for (const a of [...run.attempts, ...run.probes]) statuses.set(String(a.status ?? 'none'), (statuses.get(String(a.status ?? 'none')) ?? 0) + 1);
  const span = refused.length === 0 ? 0 : Math.max(...refused.map((a) => a.end)) - run.faultAt;
  console.log(
    `[failover: ${label}] operations=${run.operations} attempts=${run.attempts.length + run.probes.length} ` +
      `statuses=${[...statuses].map(([s, n]) => `${s}:${n}`).join(',')} writeGapMs=${run.gapMs} lastRefusalMs=${span} ` +
      `readiness=${run.readiness.map((s) => s ?? 'none').join('→')}`,
  );
}

async function pagosByOrder(db: pg.Client): Promise<Map<string, { operationId: string; estado: string }>> {
  const { rows } = await db.query(`SELECT numero_orden, operation_id, estado FROM pagos WHERE client_id = $1`, [ALICE.clientId]);
  const byOrder = new Map<string, { operationId: string; estado: string }>();
  for (const row of rows) {
    expect(byOrder.has(row.numero_orden)).toBe(false);
    byOrder.set(row.numero_orden, { operationId: row.operation_id, estado: row.estado });
  }
  return byOrder;
}

/** The processor's charges per operation (its own database: the truth). */
async function chargesByOperation(db: pg.Client): Promise<Map<string, number>> {
  const { rows } = await db.query(
    `SELECT pi.metadata->>'operation_id' AS operation_id, count(*)::int AS n
       FROM procesador_local.charges c JOIN procesador_local.payment_intents pi ON pi.id = c.payment_intent GROUP BY 1`,
  );
  return new Map(rows.map((row) => [row.operation_id as string, row.n as number]));
}

function expectServiceUp(service: AppProcess): void {
  const { exitCode, signalCode } = service.child;
  if (exitCode !== null || signalCode !== null) {
    throw new Error(`the service exited (code ${exitCode}, signal ${signalCode}); its last output:\n${service.output().slice(-3000)}`);
  }
}

/** The `LISTEN` connection (for `Prefer: wait`) lost its session in the switch and listens again. */
function expectListenerBack(service: AppProcess, logFrom: number): void {
  const log = service.output().slice(logFrom);
  const lost = log.indexOf('listening connection lost');
  expect(lost).toBeGreaterThanOrEqual(0);
  expect(log.indexOf('listening for notifications again', lost)).toBeGreaterThan(lost);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
