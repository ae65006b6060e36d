import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE, TEST_API_TOKENS } from '../support/clients.js';
import { runNodeScript, type ScriptResult } from '../support/node-script.js';
import { nuevoPago, postPago } from '../support/http.js';
import { countChargesOfOrder, expireLease, keyRow, waitForClaim } from '../support/ledger.js';
import { backdateAbandoned, estadoOf } from '../support/stale-payments.js';
import { RECONCILE_NEVER } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * `npm run ops` (the built CLI) against a running service's database, with the service's
 * configuration. Real: the CLI process, the service process, PostgreSQL.
 */
const OPS = path.resolve('dist/src/ops/main.js');

describe('the operator CLI', () => {
  let url: string;
  let app: AppProcess;
  // Its processor takes 20 s: a request there stays in flight for as long as a few CLI runs take on a busy machine.
  let slowApp: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    url = await createTestDatabase('ops_cli');
    // Their own reconcilers stay out of the way: the CLI's `pagos reconcile` is what settles here.
    app = await startAppProcess(url, { PAGOS_RECONCILE_CRON: RECONCILE_NEVER });
    // 40 s (inside a 60 s SDK timeout): the operator's commands below take seconds each on a loaded machine, and must all run while it charges.
    slowApp = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false', GATEWAY_LATENCY_MS: '40000', STRIPE_TIMEOUT_MS: '60000', PAGOS_RECONCILE_CRON: RECONCILE_NEVER });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
    await slowApp?.stop('SIGKILL');
  });

  /** A claim as a live attempt holds it (lease renewed just now), with its payment PENDIENTE when `numeroOrden` is given. */
  const liveClaim = async (numeroOrden?: string): Promise<{ key: string; operationId: string }> => {
    const key = randomUUID();
    const operationId = randomUUID();
    await db.query(
      `INSERT INTO idempotency_keys (scope, key, request_hash, status, operation_id, lock_token, locked_at, expires_at)
       VALUES ('alice', $1, repeat('a', 64), 'in_flight', $2, gen_random_uuid(), now(), now() + interval '1 day')`,
      [key, operationId],
    );
    if (numeroOrden) {
      await db.query(
        `INSERT INTO pagos (id, client_id, operation_id, numero_orden, monto, moneda, estado) VALUES (gen_random_uuid(), 'alice', $1, $2, 1999, 'EUR', 'PENDIENTE')`,
        [operationId, numeroOrden],
      );
    }
    return { key, operationId };
  };

  const opsWith = (databaseUrl: string, ...args: string[]): Promise<ScriptResult> =>
    runNodeScript(OPS, args, { DATABASE_URL: databaseUrl, API_TOKENS: TEST_API_TOKENS });
  const ops = (...args: string[]): Promise<ScriptResult> => opsWith(url, ...args);
  const paid = async (): Promise<{ key: string; text: string }> => {
    const key = randomUUID();
    const answer = await postPago(app.baseUrl, { client: ALICE, key, body: nuevoPago() });
    expect(answer.status).toBe(201);
    return { key, text: answer.text };
  };

  it('key show: state, operation id, stored status and expiry; the body only with --body', async () => {
    const { key, text } = await paid();
    const row = await keyRow(db, ALICE.clientId, key);
    const shown = await ops('key', 'show', '--client', 'alice', '--key', key);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^state\s+completed$/m);
    expect(shown.stdout).toMatch(new RegExp(`^operation id\\s+${row!.operation_id}$`, 'm'));
    expect(shown.stdout).toMatch(/^stored status\s+201$/m);
    expect(shown.stdout).toMatch(new RegExp(`^expires\\s+${row!.expires_at.toISOString()}$`, 'm'));
    expect(shown.stdout).not.toContain(text);
    expect((await ops('key', 'show', '--client', 'alice', '--key', key, '--body')).stdout).toContain(text);
  });

  it('key show of an in-flight key gives its lease age', async () => {
    const { key } = await liveClaim();
    const shown = await ops('key', 'show', '--client', 'alice', '--key', key);
    expect(shown.stdout).toMatch(/^state\s+in_flight$/m);
    expect(shown.stdout).toMatch(/^lease age\s+\d+\.\d s \(live: its owner renews it every 20\.0 s\)$/m);
  });

  // As after a SIGKILL: no renewal for 45 s of the 60 s lock timeout (renewals due every 20 s), backdated rather than waited.
  it('key show and key release say the owner of a lease that missed its renewals is gone, before a retry may take it over', async () => {
    const { key } = await liveClaim();
    await db.query(`UPDATE idempotency_keys SET locked_at = now() - interval '45 seconds' WHERE scope = 'alice' AND key = $1`, [key]);
    const shown = await ops('key', 'show', '--client', 'alice', '--key', key);
    expect(shown.stdout).toMatch(/^lease age\s+\d+\.\d s \(its owner is gone: it missed its renewals; a retry takes it over in \d+\.\d s, `key release --force` at once\)$/m);
    const refused = await ops('key', 'release', '--client', 'alice', '--key', key);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/owner is gone .* --force releases it now/) });
    expect((await keyRow(db, ALICE.clientId, key))!.status).toBe('in_flight');
  });

  it('key release: refuses a live lease, releases it with --force, and releases an abandoned one', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const running = postPago(slowApp.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    const refused = await ops('key', 'release', '--client', 'alice', '--key', key);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/held by a live attempt .* --force releases it anyway/);
    expect((await keyRow(db, ALICE.clientId, key))!.status).toBe('in_flight');

    const forced = await ops('key', 'release', '--client', 'alice', '--key', key, '--force');
    expect({ code: forced.code, stderr: forced.stderr }).toEqual({ code: 0, stderr: '' });
    expect(forced.stdout).toContain(`released key ${key} of client alice`);
    // The owner's answer can no longer be stored: it answers 409, and the retry resumes the operation, charged once.
    expect((await running).status).toBe(409);
    const retried = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(retried.status).toBe(201);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);

    const abandoned = randomUUID();
    await db.query(
      `INSERT INTO idempotency_keys (scope, key, request_hash, status, operation_id, lock_token, locked_at, expires_at)
       VALUES ('alice', $1, repeat('a', 64), 'in_flight', gen_random_uuid(), gen_random_uuid(), now(), now() + interval '1 day')`,
      [abandoned],
    );
    await expireLease(db, abandoned);
    expect((await ops('key', 'release', '--client', 'alice', '--key', abandoned)).code).toBe(0);
    expect((await keyRow(db, ALICE.clientId, abandoned))!.status).toBe('released');
    const twice = await ops('key', 'release', '--client', 'alice', '--key', abandoned);
    expect(twice).toMatchObject({ code: 1, stderr: expect.stringContaining('is released, not in_flight') });
  }, 120_000);

  it('pagos pending lists payments still PENDIENTE with their claim; pagos reconcile settles them and says how', async () => {
    const live = nuevoPago();
    await liveClaim(live.numeroOrden);
    const listed = await ops('pagos', 'pending');
    expect(listed.stdout).toMatch(new RegExp(`order ${live.numeroOrden} .*claim: in_flight, live`));
    expect((await ops('pagos', 'pending', '--older-than', '1h')).stdout).not.toContain(live.numeroOrden);

    const abandoned = nuevoPago();
    await db.query(
      `INSERT INTO pagos (id, client_id, operation_id, numero_orden, monto, moneda, estado) VALUES (gen_random_uuid(), 'alice', gen_random_uuid(), $1, 1999, 'EUR', 'PENDIENTE')`,
      [abandoned.numeroOrden],
    );
    await backdateAbandoned(db, abandoned.numeroOrden);
    expect((await ops('pagos', 'pending', '--older-than', '30m')).stdout).toMatch(
      new RegExp(`order ${abandoned.numeroOrden} .*claim: none`),
    );
    const reconciled = await ops('pagos', 'reconcile');
    expect(reconciled.code).toBe(0);
    expect(reconciled.stdout).toMatch(new RegExp(`order ${abandoned.numeroOrden} .*→ failed`));
    expect(await estadoOf(db, abandoned.numeroOrden)).toBe('FALLIDO');
    expect((await ops('pagos', 'reconcile')).stdout).toContain('nothing to settle');
  });

  it('webhooks failing prints stored text escaped: a URL or an error with CR, LF, ESC or a bidi override forges no line and sends no terminal escape', async () => {
    // Written as a service from before URLs were checked for control characters would have stored them.
    const hostile = 'https://93.184.215.14/hook\r\n2026-12-04 INFO every delivery has been acknowledged\u001b[2J\u202e';
    const error = 'HTTP 500\u001b]0;pwned\u0007';
    const { rows: [endpoint] } = await db.query<{ id: string }>(
      `INSERT INTO webhook_endpoints (id, client_id, url, event_types, secret) VALUES (gen_random_uuid(), 'alice', $1, '{pago.aprobado}', 'whsec_x') RETURNING id`,
      [hostile],
    );
    const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
    // Written as fanned out: the delivery is the test's own, and the app's relay must not make it first.
    await db.query(`INSERT INTO eventos (id, client_id, type, payload, fanned_out_at) VALUES ($1, 'alice', 'pago.aprobado', '{}', now())`, [eventId]);
    await db.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, event_created_at, attempts, last_error)
       SELECT id, $2, created_at, 1, $3 FROM eventos WHERE id = $1`,
      [eventId, endpoint!.id, error],
    );

    const result = await ops('webhooks', 'failing');
    expect(result.code).toBe(0);
    const printed = lines(result.stdout).filter((text) => text.includes(eventId));
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain('https://93.184.215.14/hook\\x0d\\x0a2026-12-04 INFO every delivery has been acknowledged\\x1b[2J\\u202e');
    expect(printed[0]).toContain('last error: HTTP 500\\x1b]0;pwned\\x07');
    expect(result.stdout).not.toMatch(/[\r\u001b\u0007\u202e]/);
    await db.query(`DELETE FROM webhook_endpoints WHERE id = $1`, [endpoint!.id]);
  });

  const UNREACHABLE = 'postgres://postgres@127.0.0.1:1/unreachable';
  const lines = (text: string): string[] => text.trimEnd().split('\n');
  /** A line as written (a string), or one that matches (a pattern). */
  const line = (expected: string | RegExp): unknown => (typeof expected === 'string' ? expected : expect.stringMatching(expected));

  it('a key the client never used: one line naming it, exit status 1', async () => {
    const result = await ops('key', 'show', '--client', 'alice', '--key', 'never-used');
    expect({ code: result.code, stderr: lines(result.stderr) }).toEqual({ code: 1, stderr: ['error: client alice has no key never-used'] });
  });

  it.each([
    [[], "error: missing command: one of key, pagos, webhooks (see npm run ops -- --help)"],
    [['refund'], "error: unknown command 'refund' (see npm run ops -- --help)"],
    [['kye'], "error: unknown command 'kye' (Did you mean key?) (see npm run ops -- --help)"],
    [['help', 'refund'], "error: unknown command 'refund' (see npm run ops -- --help)"],
    [['key'], 'error: missing command: one of show, release (see npm run ops -- key --help)'],
    [['key', 'show', '--client', 'alice'], "error: required option '--key <key>' not specified (see npm run ops -- key show --help)"],
    [['key', 'show', '--client', 'alice', '--key', 'k', '--bodi'], "error: unknown option '--bodi' (Did you mean --body?) (see npm run ops -- key show --help)"],
    [['key', 'show', '--client', 'alice', '--key'], "error: option '--key <key>' argument missing (see npm run ops -- key show --help)"],
    [['pagos', 'pending', '--older-than', 'soon'], /^error: option '--older-than <duration>' argument 'soon' is invalid\. a duration such as .* \(see npm run ops -- pagos pending --help\)$/],
    [['pagos', 'reconcile', 'now'], /^error: too many arguments for 'reconcile'\. .* \(see npm run ops -- pagos reconcile --help\)$/],
    [['webhooks', 'redeliver', '--event', 'evt_1'], /^error: option '--event <id>' argument 'evt_1' is invalid\. .* \(see npm run ops -- webhooks redeliver --help\)$/],
  ])('usage error %j: one line on stderr, exit status 2, before anything opens (the database unreachable)', async (args, message) => {
    const result = await opsWith(UNREACHABLE, ...args);
    expect({ code: result.code, stdout: result.stdout, stderr: lines(result.stderr) }).toEqual({ code: 2, stdout: '', stderr: [line(message)] });
  });

  it.each([
    [['key', 'show', '--client', 'mallory', '--key', 'k'], /^error: unknown client "mallory": API_TOKENS names "alice", "bob"$/],
    [['key', 'show', '--client', 'alice', '--key', 'has space'], /^error: malformed key: .*printable ASCII/],
    [['key', 'release', '--client', 'alice', '--key', 'has space'], /^error: malformed key: /],
  ])('%j is answered before anything opens: one line, exit status 1, the database unreachable', async (args, message) => {
    const result = await opsWith(UNREACHABLE, ...args);
    expect({ code: result.code, stdout: result.stdout, stderr: lines(result.stderr) }).toEqual({ code: 1, stdout: '', stderr: [line(message)] });
  });

  it.each([[['--help']], [['help']], [['key', 'show', '--help']]])('%j prints the whole help on stdout, exit status 0', async (args) => {
    const result = await opsWith(UNREACHABLE, ...args);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: ops /);
    expect(lines(result.stdout).length).toBeGreaterThan(5);
  });
});
