import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE, BOB, type TestClient } from '../support/clients.js';
import { get, type HttpResult, nuevoPago, postPago } from '../support/http.js';
import { listenForDecidedPagos, type PagoNotifications } from '../support/pago-notifications.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil, within } from '../support/waiting.js';
import { metricOf } from '../support/waiters.js';

/**
 * `GET /pagos/{id}` with `Prefer: wait=N`: the app's one request after 3-D Secure, answered when the
 * payment is decided. Real: the service process on a real port (its local processor, which answers
 * `pm_card_authenticationRequired` with 202 REQUIERE_AUTENTICACION), PostgreSQL, the trigger, the
 * process's LISTEN connection, and a LISTEN connection of the test's own. The decision is a direct
 * UPDATE, as the processor's webhook applies it (DECIDIR_PAGO): that path is tested elsewhere, and
 * the trigger fires on the row, whoever writes it. Only the wait=1 test waits out its second: the
 * timeout is the contract under test.
 */
// Only a guard against hanging; a woken waiter answers in milliseconds.
const WOKEN_WITHIN_MS = 5_000;
// The second process's LISTEN connection logs in as this role, so that the test can kill it and keep
// it out (NOLOGIN) without touching the pool (as test/faults/waiting.fault-spec.ts does).
const LISTEN_ROLE = `pagos_wait_listen_${createHash('sha256').update(process.cwd()).digest('hex').slice(0, 6)}`;
// A server that asks for passwords refuses a role without one; a trust-auth one ignores it.
const LISTEN_PASSWORD = randomUUID();

describe('GET /pagos/{id} with Prefer: wait', () => {
  let url: string;
  let db: pg.Client;
  let app: AppProcess;
  let polling: AppProcess;
  let decided: PagoNotifications;

  beforeAll(async () => {
    url = await createTestDatabase('pago_wait');
    app = await startAppProcess(url);
    db = await connect(url);
    await db.query(`DO $$ BEGIN CREATE ROLE ${pg.escapeIdentifier(LISTEN_ROLE)}; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    await db.query(`ALTER ROLE ${pg.escapeIdentifier(LISTEN_ROLE)} LOGIN PASSWORD ${db.escapeLiteral(LISTEN_PASSWORD)}`);
    const listenUrl = new URL(url);
    listenUrl.username = LISTEN_ROLE;
    listenUrl.password = LISTEN_PASSWORD;
    polling = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false', DATABASE_LISTEN_URL: listenUrl.toString() });
    decided = await listenForDecidedPagos(url);
  });

  afterAll(async () => {
    await decided?.close();
    await db?.query(`ALTER ROLE ${pg.escapeIdentifier(LISTEN_ROLE)} LOGIN`);
    await db?.end();
    await Promise.all([app, polling].map((process) => process?.stop('SIGKILL')));
  });

  /** A payment waiting for the customer's 3-D Secure, made through the real route. */
  const pagoEnAutenticacion = async (): Promise<string> => {
    const created = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago({ token: 'pm_card_authenticationRequired' }) });
    expect([created.status, (created.json as { estado: string }).estado]).toEqual([202, 'REQUIERE_AUTENTICACION']);
    return (created.json as { id: string }).id;
  };
  const getWaiting = (base: string, id: string, wait: number | string, client: TestClient = ALICE): Promise<HttpResult> =>
    get(base, `/pagos/${id}`, client, { prefer: `wait=${wait}` });
  const esperado = async (id: string): Promise<boolean> => (await db.query(`SELECT esperado FROM pagos WHERE id = $1`, [id])).rows[0].esperado;
  /** What the processor's webhook writes when the customer authenticated (DECIDIR_PAGO). */
  const aprobar = async (id: string): Promise<void> => {
    await db.query(`UPDATE pagos SET estado = 'APROBADO', motivo = NULL, client_secret = NULL, autenticacion_expira_en = NULL WHERE id = $1`, [id]);
  };

  it('a waiter is woken by the notification of the decision and answers it long before its wait runs out', async () => {
    const id = await pagoEnAutenticacion();
    const waiter = within(getWaiting(app.baseUrl, id, 30), WOKEN_WITHIN_MS + 1_000);
    // The waiter marked the payment before reading it: its decision will be notified.
    await waitUntil(() => esperado(id));
    const decidedAt = performance.now();
    await aprobar(id);
    const answer = await waiter;
    const afterMs = performance.now() - decidedAt;
    expect([answer.status, (answer.json as { estado: string }).estado]).toEqual([200, 'APROBADO']);
    expect(answer.json).not.toHaveProperty('autenticacion');
    expect(answer.headers.get('preference-applied')).toBe('wait=30');
    expect(afterMs).toBeLessThan(WOKEN_WITHIN_MS);
    await within(decided.notified(id), WOKEN_WITHIN_MS);
    expect(await metricOf(app, 'idempotency_listener_connected')).toBe(1);
    console.log(`pago-wait: answered ${Math.round(afterMs)} ms after the decision`);
  });

  it('Prefer: wait=1 on a payment nobody decides answers it still waiting once the second has passed', async () => {
    const id = await pagoEnAutenticacion();
    const started = performance.now();
    const answer = await getWaiting(app.baseUrl, id, 1);
    const elapsedMs = performance.now() - started;
    expect([answer.status, (answer.json as { estado: string }).estado]).toEqual([200, 'REQUIERE_AUTENTICACION']);
    expect(answer.json).toHaveProperty('autenticacion.clientSecret');
    expect(answer.headers.get('preference-applied')).toBe('wait=1');
    expect(elapsedMs).toBeGreaterThanOrEqual(1000);
    expect(elapsedMs).toBeLessThan(WOKEN_WITHIN_MS);
  });

  it('a wait beyond 60 s is granted 60 (Preference-Applied says so)', async () => {
    const id = await pagoEnAutenticacion();
    const waiter = getWaiting(app.baseUrl, id, 3600);
    await waitUntil(() => esperado(id));
    await aprobar(id);
    const answer = await within(waiter, WOKEN_WITHIN_MS);
    expect([answer.status, answer.headers.get('preference-applied')]).toEqual([200, 'wait=60']);
  });

  it('payments nobody waits on are decided without a notification; a plain GET does not mark them', async () => {
    const unwaited = await pagoEnAutenticacion();
    expect((await get(app.baseUrl, `/pagos/${unwaited}`, ALICE)).status).toBe(200);
    expect(await esperado(unwaited)).toBe(false);
    await aprobar(unwaited);
    // A waited payment decided afterwards: notifications arrive in commit order on one connection,
    // so once this one is here an earlier one would have been too.
    const waited = await pagoEnAutenticacion();
    const waiter = getWaiting(app.baseUrl, waited, 30);
    await waitUntil(() => esperado(waited));
    await aprobar(waited);
    await within(decided.notified(waited), WOKEN_WITHIN_MS);
    expect((await waiter).status).toBe(200);
    expect([decided.count(unwaited), decided.count(waited)]).toEqual([0, 1]);
  });

  it('a payment already decided is answered at once, without Preference-Applied (no wait was applied), and left unmarked', async () => {
    const created = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() });
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;
    const started = performance.now();
    const answer = await getWaiting(app.baseUrl, id, 30);
    expect({ status: answer.status, text: answer.text, applied: answer.headers.get('preference-applied') }).toEqual({
      status: 200,
      text: (await get(app.baseUrl, `/pagos/${id}`, ALICE)).text,
      applied: null,
    });
    expect(performance.now() - started).toBeLessThan(WOKEN_WITHIN_MS);
    expect(await esperado(id)).toBe(false);
  });

  it("unknown, malformed and someone else's ids are 404 at once, even asking to wait; wait=0 and an unparsable wait don't wait", async () => {
    const id = await pagoEnAutenticacion();
    const answers = await within(
      Promise.all([getWaiting(app.baseUrl, randomUUID(), 30), getWaiting(app.baseUrl, 'no-es-un-id', 30), getWaiting(app.baseUrl, id, 30, BOB)]),
      WOKEN_WITHIN_MS,
    );
    expect(answers.map((answer) => [answer.status, answer.headers.get('preference-applied')])).toEqual([[404, null], [404, null], [404, null]]);
    expect(await esperado(id)).toBe(false);
    const notWaiting = await within(Promise.all([getWaiting(app.baseUrl, id, 0), getWaiting(app.baseUrl, id, 'soon')]), WOKEN_WITHIN_MS);
    expect(notWaiting.map((answer) => [answer.status, answer.headers.get('preference-applied')])).toEqual([[200, null], [200, null]]);
  });

  it('with the LISTEN connection killed and kept out, a waiter finds the decision by polling; shutdown answers the waiters left at once', async () => {
    const { rows } = await db.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND usename = $1 AND application_name = 'notification-listener'`,
      [LISTEN_ROLE],
    );
    expect(rows).toHaveLength(1);
    await db.query(`ALTER ROLE ${pg.escapeIdentifier(LISTEN_ROLE)} NOLOGIN`);
    await db.query(`SELECT pg_terminate_backend($1)`, [rows[0].pid]);
    await waitUntil(async () => (await metricOf(polling, 'idempotency_listener_connected')) === 0);
    const id = await pagoEnAutenticacion();
    const waiter = getWaiting(polling.baseUrl, id, 30);
    await waitUntil(() => esperado(id));
    await aprobar(id);
    const answer = await within(waiter, WOKEN_WITHIN_MS);
    expect([answer.status, (answer.json as { estado: string }).estado, answer.headers.get('preference-applied')]).toEqual([200, 'APROBADO', 'wait=30']);
    // Still down when the answer came: it was found by polling, not by a notification.
    expect(await metricOf(polling, 'idempotency_listener_connected')).toBe(0);

    const left = await pagoEnAutenticacion();
    const waiting = getWaiting(polling.baseUrl, left, 30);
    await waitUntil(() => esperado(left));
    const exitCode = polling.stop('SIGTERM');
    const atShutdown = await within(waiting, WOKEN_WITHIN_MS);
    expect([atShutdown.status, (atShutdown.json as { estado: string }).estado]).toEqual([200, 'REQUIERE_AUTENTICACION']);
    expect(await within(exitCode, 15_000)).toBe(0);
  });
});
