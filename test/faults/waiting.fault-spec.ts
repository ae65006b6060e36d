import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { nuevoPago, postPago } from '../support/http.js';
import { countCharges, waitForClaim } from '../support/ledger.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil, within } from '../support/waiting.js';
import { answeredAt, metricOf, postWaiting, waitForWaiters } from '../support/waiters.js';

/**
 * Waiting duplicates when things go wrong, with whole processes: the LISTEN connection killed by
 * PostgreSQL (`pg_terminate_backend`) and kept out for a while, and SIGTERM while duplicates wait.
 * The listener logs in as its own role so that the test can refuse its reconnection (NOLOGIN)
 * without touching the pool. Real: processes, signals, PostgreSQL, its roles and backends.
 */
const LISTEN_ROLE = `pagos_listen_${createHash('sha256').update(process.cwd()).digest('hex').slice(0, 6)}`;
// A server that asks for passwords (the embedded one) refuses a role without one; a trust-auth one ignores it.
const LISTEN_PASSWORD = randomUUID();
// The listener retries with a backoff of at most 5 s: it is back within a few of those, polled every 50 ms.
const LISTENER_BACK_POLLS = 300;

describe('waiting duplicates under faults', () => {
  let url: string;
  let db: pg.Client;
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    url = await createTestDatabase('fault_waiting');
    db = await connect(url);
    const role = pg.escapeIdentifier(LISTEN_ROLE);
    await db.query(`DO $$ BEGIN CREATE ROLE ${role}; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    await db.query(`ALTER ROLE ${role} LOGIN PASSWORD ${db.escapeLiteral(LISTEN_PASSWORD)}`);
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop('SIGKILL')));
    await db?.query(`ALTER ROLE ${pg.escapeIdentifier(LISTEN_ROLE)} LOGIN`);
    await db?.end();
  });

  const listenerPid = async (): Promise<number | undefined> => {
    const { rows } = await db.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND usename = $1 AND application_name = 'notification-listener'`,
      [LISTEN_ROLE],
    );
    return rows[0]?.pid;
  };

  it('the listening connection killed and kept out: waiters still get the answer by polling, and the listener comes back', async () => {
    const listenUrl = new URL(url);
    listenUrl.username = LISTEN_ROLE;
    listenUrl.password = LISTEN_PASSWORD;
    const app = await startAppProcess(url, { GATEWAY_LATENCY_MS: '1500', DATABASE_LISTEN_URL: listenUrl.toString() });
    apps.push(app);
    const killed = await listenerPid();
    expect(killed).toBeDefined();
    expect(await metricOf(app, 'idempotency_listener_connected')).toBe(1);

    const key = randomUUID();
    const body = nuevoPago();
    const first = postPago(app.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const waiter = postWaiting(app.baseUrl, 10, { client: ALICE, key, body });
    await waitForWaiters(app, 1);
    await db.query(`ALTER ROLE ${pg.escapeIdentifier(LISTEN_ROLE)} NOLOGIN`);
    await db.query(`SELECT pg_terminate_backend($1)`, [killed]);
    await waitUntil(async () => (await metricOf(app, 'idempotency_listener_connected')) === 0);

    const [original, waited] = await Promise.all([first, waiter]);
    expect({ status: waited.status, text: waited.text, replayed: waited.headers.get('idempotent-replayed') }).toEqual({
      status: 201,
      text: original.text,
      replayed: 'true',
    });
    // Still down when the answer came: it was found by polling, not by a notification.
    expect(await metricOf(app, 'idempotency_listener_connected')).toBe(0);
    expect(app.output()).toContain('waiters poll until it is back');

    await db.query(`ALTER ROLE ${pg.escapeIdentifier(LISTEN_ROLE)} LOGIN`);
    await waitForListener(app);
    const back = await listenerPid();
    expect(back).toBeDefined();
    expect(back).not.toBe(killed);
    expect(app.output()).toContain('listening for notifications again');

    // Back on notifications: the next waiter is woken by one.
    const nextKey = randomUUID();
    const nextBody = nuevoPago();
    const nextFirst = postPago(app.baseUrl, { client: ALICE, key: nextKey, body: nextBody });
    await waitForClaim(db, nextKey);
    const nextWaiter = await postWaiting(app.baseUrl, 10, { client: ALICE, key: nextKey, body: nextBody });
    expect(nextWaiter.text).toBe((await nextFirst).text);
  });

  it('SIGTERM while duplicates wait: every waiter is answered at once (409, Retry-After), the first finishes, exit 0', async () => {
    const app = await startAppProcess(url, { GATEWAY_LATENCY_MS: '3000', DB_MIGRATIONS_RUN: 'false' });
    apps.push(app);
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const first = answeredAt(postPago(app.baseUrl, { client: ALICE, key, body }));
    await waitForClaim(db, key);
    const waiters = Array.from({ length: 5 }, () => answeredAt(postWaiting(app.baseUrl, 10, { client: ALICE, key, body })));
    await waitForWaiters(app, 5);

    const signalledAt = performance.now();
    const exitCode = within(app.stop('SIGTERM'), 15_000);
    const waited = await Promise.all(waiters);
    const original = await first;
    expect(await exitCode).toBe(0);
    const exitedMs = performance.now() - signalledAt;

    for (const { answer, at } of waited) {
      expect([answer.status, answer.json.type, answer.headers.get('retry-after')]).toEqual([409, expect.stringContaining('idempotency-key-in-flight'), '1']);
      // Answered before the first attempt finished: the drain did not wait for them, nor they for it.
      expect(at).toBeLessThan(original.at);
    }
    expect(original.answer.status).toBe(201);
    expect(await countCharges(db)).toBe(charges + 1);
    expect((await db.query(`SELECT status FROM idempotency_keys WHERE key = $1`, [key])).rows).toEqual([{ status: 'completed' }]);
    const lastWaiterMs = Math.max(...waited.map(({ at }) => at)) - signalledAt;
    console.log(`waiting-shutdown: waiters answered within ${Math.round(lastWaiterMs)} ms of SIGTERM; first answered at ${Math.round(original.at - signalledAt)} ms; exit 0 at ${Math.round(exitedMs)} ms`);
  });
});

async function waitForListener(app: AppProcess): Promise<void> {
  for (let poll = 0; poll < LISTENER_BACK_POLLS; poll++) {
    if ((await metricOf(app, 'idempotency_listener_connected')) === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the listener did not come back');
}
