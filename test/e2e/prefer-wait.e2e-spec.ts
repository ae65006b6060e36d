import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { NO_WEBHOOKS } from '../support/survivor-and-victims.js';
import { ALICE } from '../support/clients.js';
import { checkedFetch, get, nuevoPago, postPago } from '../support/http.js';
import { countCharges, keyRow, waitForClaim } from '../support/ledger.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { answeredAt, metricOf, postWaiting, waitForWaiters } from '../support/waiters.js';

/**
 * `Prefer: wait`: a duplicate of a key in flight waits for the first attempt's answer, woken by
 * the NOTIFY of its settlement. Real: three service processes on one PostgreSQL, HTTP, the trigger,
 * each process's LISTEN connection. `main` has a pool of 2 and a 1.5 s charge; `peer` is a second
 * replica whose duplicates wait 10 s by default; `slow` charges in 3 s and lets one duplicate wait.
 * No test waits out a timeout it could shorten: the one-second wait is the contract under test.
 */
describe('duplicates that wait for the first answer (Prefer: wait)', () => {
  let db: pg.Client;
  let main: AppProcess;
  let peer: AppProcess;
  let slow: AppProcess;

  beforeAll(async () => {
    const url = await createTestDatabase('prefer_wait');
    main = await startAppProcess(url, { ...NO_WEBHOOKS, GATEWAY_LATENCY_MS: '1500', DB_POOL_SIZE: '2' });
    const replica = { DB_MIGRATIONS_RUN: 'false' };
    [peer, slow] = await Promise.all([
      startAppProcess(url, { ...replica, ...NO_WEBHOOKS, GATEWAY_LATENCY_MS: '1500', IDEMPOTENCY_DEFAULT_WAIT_SECONDS: '10' }),
      startAppProcess(url, { ...replica, ...NO_WEBHOOKS, GATEWAY_LATENCY_MS: '3000', IDEMPOTENCY_MAX_WAITERS: '1' }),
    ]);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all([main, peer, slow].map((app) => app?.stop('SIGKILL')));
  });

  it('Prefer: wait=5 during a 1.5 s charge gets the first answer byte for byte; without Prefer the duplicate is 409 at once', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = answeredAt(postPago(main.baseUrl, { client: ALICE, key, body }));
    await waitForClaim(db, key);

    const bounced = await postPago(main.baseUrl, { client: ALICE, key, body });
    expect(bounced.status).toBe(409);
    expect(bounced.headers.get('retry-after')).toBe('1');
    expect(bounced.headers.get('preference-applied')).toBeNull();
    // A duplicate that does not wait leaves the key unmarked: its completion will send no notification.
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'in_flight', has_waiters: false });

    const waiter = answeredAt(postWaiting(main.baseUrl, 5, { client: ALICE, key, body }));
    const [original, waited] = await Promise.all([first, waiter]);
    expect(original.answer.status).toBe(201);
    expect({ status: waited.answer.status, text: waited.answer.text }).toEqual({ status: 201, text: original.answer.text });
    expect(waited.answer.headers.get('location')).toBe(original.answer.headers.get('location'));
    expect(waited.answer.headers.get('content-type')).toBe(original.answer.headers.get('content-type'));
    expect(waited.answer.headers.get('idempotent-replayed')).toBe('true');
    expect(waited.answer.headers.get('preference-applied')).toBe('wait=5');
    expect(await countCharges(db, 'operation_key = $1', [`pagos-${(await keyRow(db, ALICE.clientId, key))!.operation_id}`])).toBe(1);
    console.log(`prefer-wait: waiter answered ${Math.round(waited.at - original.at)} ms after the first answer`);
  });

  it('a mismatching body is 422 and an invalid one 400 at once, even asking to wait', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = postPago(main.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const mismatch = await postWaiting(main.baseUrl, 10, { client: ALICE, key, body: { ...body, monto: body.monto + 1 } });
    const invalid = await postWaiting(main.baseUrl, 10, { client: ALICE, key, body: { ...body, monto: 'mucho' } });
    expect([mismatch.status, mismatch.json.type]).toEqual([422, expect.stringContaining('idempotency-key-reused')]);
    expect([invalid.status, invalid.json.type]).toEqual([400, expect.stringContaining('validation-failed')]);
    expect((await keyRow(db, ALICE.clientId, key))!.status).toBe('in_flight');
    expect((await first).status).toBe(201);
  });

  it('20 waiters on one key with a pool of 2: one charge, 21 identical answers, and the pool keeps serving', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const first = postPago(main.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const waiters = Array.from({ length: 20 }, () => postWaiting(main.baseUrl, 10, { client: ALICE, key, body }));
    await waitForWaiters(main, 20);
    // Waiters hold no connection: a read on the same pool of 2 is served while all 20 wait.
    const listed = await get(main.baseUrl, `/pagos?numeroOrden=${body.numeroOrden}`, ALICE);
    expect(listed.status).toBe(200);
    expect(await metricOf(main, 'idempotency_waiters')).toBe(20);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'in_flight', has_waiters: true });

    const answers = [await first, ...(await Promise.all(waiters))];
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
    expect(answers.slice(1).map((answer) => answer.headers.get('idempotent-replayed'))).toEqual(waiters.map(() => 'true'));
    expect(await countCharges(db)).toBe(charges + 1);
    expect(await metricOf(main, 'idempotency_waiters')).toBe(0);
    expect(main.output()).not.toMatch(/timeout exceeded when trying to connect|"statusCode":503/);
  });

  it('Prefer: wait=1 on a 3 s charge: 409 in flight with Retry-After once the second has passed', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = postPago(slow.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const started = performance.now();
    const waited = await postWaiting(slow.baseUrl, 1, { client: ALICE, key, body });
    const elapsedMs = performance.now() - started;
    expect(waited.status).toBe(409);
    expect(waited.json.type).toContain('idempotency-key-in-flight');
    expect(waited.headers.get('retry-after')).toBe('1');
    expect(waited.headers.get('preference-applied')).toBe('wait=1');
    expect(elapsedMs).toBeGreaterThanOrEqual(1000);
    expect((await keyRow(db, ALICE.clientId, key))!.status).toBe('in_flight');
    console.log(`prefer-wait: wait=1 answered 409 after ${Math.round(elapsedMs)} ms`);
    expect((await first).status).toBe(201);
  });

  it('beyond IDEMPOTENCY_MAX_WAITERS a duplicate is 409 at once; a waiter whose client hangs up stops waiting', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = postPago(slow.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const hangUp = new AbortController();
    const leaving = checkedFetch(`${slow.baseUrl}/pagos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE.token}`, 'content-type': 'application/json', 'idempotency-key': key, prefer: 'wait=10' },
      body: JSON.stringify(body),
      signal: hangUp.signal,
    }).catch((error: Error) => error.name);
    await waitForWaiters(slow, 1);

    const overCap = await postWaiting(slow.baseUrl, 10, { client: ALICE, key, body });
    expect([overCap.status, overCap.headers.get('preference-applied')]).toEqual([409, null]);
    expect(await metricOf(slow, 'idempotency_waiters')).toBe(1);

    hangUp.abort();
    expect(await leaving).toBe('AbortError');
    await waitForWaiters(slow, 0);
    expect((await keyRow(db, ALICE.clientId, key))!.status).toBe('in_flight');
    expect((await first).status).toBe(201);
  });

  it('the first attempt fails with a 5xx while a duplicate waits: the waiter takes the claim over and finishes it, one charge', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    // Fault injection in the database: the first attempt's closing write fails once (a sequence
    // is not rolled back), so that attempt answers 500 and releases its claim.
    await db.query(`CREATE SEQUENCE IF NOT EXISTS cerrar_falla_una_vez`);
    await db.query(`
      CREATE OR REPLACE FUNCTION cerrar_falla_una_vez() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('cerrar_falla_una_vez') = 1 THEN RAISE EXCEPTION 'injected failure of the first close'; END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER cerrar_falla_una_vez BEFORE UPDATE ON pagos FOR EACH ROW
        WHEN (NEW.numero_orden = ${pg.escapeLiteral(body.numeroOrden)} AND NEW.estado = 'APROBADO')
        EXECUTE FUNCTION cerrar_falla_una_vez()`);
    const recovered = await metricOf(main, 'idempotency_outcomes_total', { outcome: 'lock_recovered' });
    const charges = await countCharges(db);

    const first = postPago(main.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const waiter = postWaiting(main.baseUrl, 10, { client: ALICE, key, body });
    const [failed, finished] = await Promise.all([first, waiter]);
    expect(failed.status).toBe(500);
    expect(finished.status).toBe(201);
    expect(finished.headers.get('idempotent-replayed')).toBeNull();
    expect(finished.headers.get('preference-applied')).toBe('wait=10');
    expect(await metricOf(main, 'idempotency_outcomes_total', { outcome: 'lock_recovered' })).toBe(recovered + 1);
    expect(await countCharges(db)).toBe(charges + 1);
    const replay = await postPago(peer.baseUrl, { client: ALICE, key, body });
    expect({ status: replay.status, text: replay.text }).toEqual({ status: 201, text: finished.text });
    await db.query(`DROP TRIGGER cerrar_falla_una_vez ON pagos`);
  });

  it('a waiter on one replica is woken by the notification of the first attempt finishing on the other', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const before = await metricOf(main, 'idempotency_outcomes_total', { outcome: 'waited_replay' });
    const first = postPago(peer.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const started = performance.now();
    const waited = await postWaiting(main.baseUrl, 10, { client: ALICE, key, body });
    expect({ status: waited.status, text: waited.text }).toEqual({ status: 201, text: (await first).text });
    // Answered when the 1.5 s charge finished, not by the re-read at the end of its 10 s.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await metricOf(main, 'idempotency_outcomes_total', { outcome: 'waited_replay' })).toBe(before + 1);
    expect(await metricOf(main, 'idempotency_listener_connected')).toBe(1);
    expect(await metricOf(main, 'idempotency_wait_duration_seconds_count', { outcome: 'waited_replay' })).toBeGreaterThanOrEqual(1);
  });

  it('IDEMPOTENCY_DEFAULT_WAIT_SECONDS applies without Prefer (no Preference-Applied); Prefer: wait=0 opts out', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = postPago(main.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const optedOut = await postWaiting(peer.baseUrl, 0, { client: ALICE, key, body });
    expect(optedOut.status).toBe(409);
    const waited = await postPago(peer.baseUrl, { client: ALICE, key, body });
    expect({ status: waited.status, text: waited.text }).toEqual({ status: 201, text: (await first).text });
    expect(waited.headers.get('preference-applied')).toBeNull();
  });

  it('an unparsable wait is ignored as RFC 7240 asks: the default applies', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = postPago(main.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const ignored = await postWaiting(main.baseUrl, 'soon', { client: ALICE, key, body });
    expect([ignored.status, ignored.headers.get('preference-applied')]).toEqual([409, null]);
    expect((await first).status).toBe(201);
  });
});
