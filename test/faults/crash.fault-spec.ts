import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { sendWithRetries } from '../../examples/client/send-with-retries.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { nuevoPago, postPago, type HttpResult, type PagoBody } from '../support/http.js';
import { chargesOfPagoSql, countCharges } from '../support/ledger.js';
import { seededRandom } from '../support/seeded-random.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

/**
 * SIGKILL of the service with requests in flight, some before and some after the gateway charged;
 * a new process, and every client retrying its operation with its key. Real: processes, SIGKILL,
 * PostgreSQL. The lock timeout is 2 s so that takeovers happen within the test.
 */
const PER_WAVE = 15;
const LOCK_TIMEOUT_SECONDS = 2;

describe('a crash with requests in flight', () => {
  let url: string;
  let db: pg.Client;
  const processes: AppProcess[] = [];

  beforeAll(async () => {
    url = await createTestDatabase('crash');
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all(processes.map((service) => service.stop('SIGKILL')));
  });

  const start = async (env: Record<string, string>): Promise<AppProcess> => {
    const service = await startAppProcess(url, { IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: String(LOCK_TIMEOUT_SECONDS), ...env });
    processes.push(service);
    return service;
  };
  const send = (baseUrl: string, operation: { key: string; body: PagoBody }): Promise<HttpResult> =>
    postPago(baseUrl, { client: ALICE, ...operation });
  const count = async (sql: string, params: unknown[]): Promise<number> => (await db.query(sql, params)).rows[0].n;

  it('every operation ends with exactly one approved charge and a replayable answer, and no key stays stuck', async () => {
    // 4 s at the gateway: charged after 2 s, answered after 4 s. The second wave must claim its keys
    // while the first waits for its answers: 0.75 s (of 1.5) was too short on a loaded CI machine.
    const doomed = await start({ GATEWAY_LATENCY_MS: '4000' });
    const operations = Array.from({ length: PER_WAVE * 2 }, () => ({ key: randomUUID(), body: nuevoPago() }));
    const charged = operations.slice(0, PER_WAVE);
    const notYetCharged = operations.slice(PER_WAVE);
    const lost = charged.map((operation) => send(doomed.baseUrl, operation).catch(() => undefined));
    await waitUntil(async () => (await countCharges(db)) === PER_WAVE);
    lost.push(...notYetCharged.map((operation) => send(doomed.baseUrl, operation).catch(() => undefined)));
    await waitUntil(async () => (await count(`SELECT count(*)::int AS n FROM idempotency_keys WHERE status = 'in_flight'`, [])) === PER_WAVE * 2);
    await doomed.stop('SIGKILL');
    await Promise.all(lost);

    const chargesAtCrash = await countCharges(db);
    const stuckAtCrash = await count(`SELECT count(*)::int AS n FROM idempotency_keys WHERE status = 'in_flight'`, []);
    expect(stuckAtCrash).toBe(PER_WAVE * 2);

    const restarted = await start({ DB_MIGRATIONS_RUN: 'false' });
    const random = seededRandom(7);
    const startedAt = Date.now();
    const outcomes = await Promise.all(
      operations.map((operation) => sendWithRetries(() => send(restarted.baseUrl, operation), { maxAttempts: 20, baseDelayMs: 100, maxDelayMs: 1000, random })),
    );
    const recoveryMs = Date.now() - startedAt;
    const attempts = outcomes.reduce((sum, outcome) => sum + outcome.attempts, 0);
    const charges = await countCharges(db);
    console.log(
      `crash: operations=${operations.length} chargedBeforeKill=${chargesAtCrash} stuckKeys=${stuckAtCrash} retryAttempts=${attempts} charges=${charges} recoveryMs=${recoveryMs}`,
    );

    expect(outcomes.map((outcome) => outcome.result?.status)).toEqual(operations.map(() => 201));
    expect(charges).toBe(operations.length);
    for (const [index, { key, body }] of operations.entries()) {
      const approved = await count(
        `SELECT ${chargesOfPagoSql('p')} AS n FROM pagos p WHERE p.numero_orden = $1 AND p.estado = 'APROBADO'`,
        [body.numeroOrden],
      );
      expect(approved).toBe(1);
      const replay = await send(restarted.baseUrl, { key, body });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(outcomes[index]!.result!.text);
    }
    expect(await count(`SELECT count(*)::int AS n FROM idempotency_keys WHERE status <> 'completed'`, [])).toBe(0);
  });
});
