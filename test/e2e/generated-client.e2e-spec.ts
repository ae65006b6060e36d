import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import createClient from 'openapi-fetch';
import type pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { checkedFetch, get, nuevoPago } from '../support/http.js';
import { waitForClaim } from '../support/ledger.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import type { paths } from '../generated/pagos-api.js';

/**
 * What a team generating its client from the served document gets. The types are openapi-typescript's
 * output, committed (test/generated/pagos-api.d.ts) so that a contract change shows up as a typed diff
 * in review and this file type-checks in any checkout; the first test fails when they are stale. The
 * client is openapi-fetch on them, sending through checkedFetch, so each answer is also checked
 * against the document. Every answer below is typed by the document alone: nothing is cast, and
 * tsc checks this file (second test), including the lines that must not compile.
 */
const GENERATED = 'test/generated/pagos-api.d.ts';
const FRESH = 'test-results/openapi/pagos-api.d.ts';
const problem = <S extends string>(slug: S) => `https://pagos.dev/problems/${slug}` as const;

/** Narrows a typed error to one problem type of the document's union, failing the test otherwise. */
function expectProblem<P extends { type: string }, T extends P['type']>(error: P | undefined, type: T): asserts error is Extract<P, { type: T }> {
  expect(error?.type).toBe(type);
}

function expectData<D>(data: D | undefined): asserts data is D {
  expect(data).toBeDefined();
}

describe('a client generated from the served document (openapi-typescript + openapi-fetch) runs the retry story', () => {
  let app: AppProcess;
  let db: pg.Client;
  let client: ReturnType<typeof createClient<paths>>;

  beforeAll(async () => {
    const url = await createTestDatabase('generated_client');
    // A charge takes 1.5 s: long enough for a duplicate to find its key in flight.
    app = await startAppProcess(url, { GATEWAY_LATENCY_MS: '1500' });
    db = await connect(url);
    client = createClient<paths>({ baseUrl: app.baseUrl, fetch: checkedFetch, headers: { authorization: `Bearer ${ALICE.token}` } });
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  it(`${GENERATED} is what openapi-typescript generates from the served document`, async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'pagos-client-'));
    try {
      await writeFile(path.join(folder, 'openapi.json'), (await get(app.baseUrl, '/docs/openapi.json')).text);
      await run('node_modules/.bin/openapi-typescript', [path.join(folder, 'openapi.json'), '--output', path.join(folder, 'pagos-api.d.ts')]);
      const fresh = await readFile(path.join(folder, 'pagos-api.d.ts'), 'utf8');
      if (fresh !== (await readFile(GENERATED, 'utf8').catch(() => ''))) {
        await mkdir(path.dirname(FRESH), { recursive: true });
        await writeFile(FRESH, fresh);
        throw new Error(`${GENERATED} is stale: the served document changed. Review and take the new one: cp ${FRESH} ${GENERATED}`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('this file type-checks against the generated types (tsc, strict)', async () => {
    await run('node_modules/.bin/tsc', ['--project', 'tsconfig.generated-client.json']);
  });

  it('201, a concurrent duplicate\'s 409 in flight, Prefer: wait, the replay, a 422 mismatch, the order already paid', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const headers = { 'Idempotency-Key': key };
    const first = client.POST('/pagos', { params: { header: headers }, body });
    await waitForClaim(db, key);

    const bounced = await client.POST('/pagos', { params: { header: headers }, body });
    expect(bounced.response.status).toBe(409);
    expectProblem(bounced.error, problem('idempotency-key-in-flight'));
    expect([bounced.error.status, bounced.response.headers.get('retry-after')]).toEqual([409, '1']);
    // @ts-expect-error An in-flight 409 names no payment: only the order conflicts have pagoExistenteId.
    expect(bounced.error.pagoExistenteId).toBeUndefined();

    const waited = await client.POST('/pagos', { params: { header: { ...headers, Prefer: 'wait=5' } }, body });
    const created = await first;
    expectData(created.data);
    expectData(waited.data);
    expect([created.response.status, created.data.estado, created.response.headers.get('location')]).toEqual([201, 'APROBADO', `/pagos/${created.data.id}`]);
    expect(waited.data).toEqual(created.data);
    expect([waited.response.headers.get('idempotent-replayed'), waited.response.headers.get('preference-applied')]).toEqual(['true', 'wait=5']);

    const replay = await client.POST('/pagos', { params: { header: headers }, body });
    expect([replay.data, replay.response.headers.get('idempotent-replayed')]).toEqual([created.data, 'true']);

    const mismatch = await client.POST('/pagos', { params: { header: headers }, body: { ...body, monto: body.monto + 1 } });
    expectProblem(mismatch.error, problem('idempotency-key-reused'));
    expect(mismatch.response.status).toBe(422);

    const paid = await client.POST('/pagos', { params: { header: { 'Idempotency-Key': randomUUID() } }, body });
    expectProblem(paid.error, problem('orden-ya-pagada'));
    expect(paid.error.pagoExistenteId).toBe(created.data.id);
  });

  it('a decline (402 with the payment), and a refund\'s 409s: too much, a payment that cannot be refunded, replayed', async () => {
    const approved = await client.POST('/pagos', { params: { header: { 'Idempotency-Key': randomUUID() } }, body: nuevoPago({ monto: 1000 }) });
    expectData(approved.data);
    const pagoId = approved.data.id;
    const tooMuch = await client.POST('/pagos/{pagoId}/reembolsos', { params: { path: { pagoId }, header: { 'Idempotency-Key': randomUUID() } }, body: { monto: 1500 } });
    expectProblem(tooMuch.error, problem('reembolso-excede-pago'));
    expect([tooMuch.error.montoSolicitado, tooMuch.error.montoReembolsable]).toEqual([1500, 1000]);
    const refunded = await client.POST('/pagos/{pagoId}/reembolsos', {
      params: { path: { pagoId }, header: { 'Idempotency-Key': randomUUID() } }, body: { monto: 400, motivo: 'producto devuelto' },
    });
    expectData(refunded.data);
    expect([refunded.data.monto, refunded.data.estado]).toEqual([400, 'APROBADO']);

    const declined = await client.POST('/pagos', { params: { header: { 'Idempotency-Key': randomUUID() } }, body: nuevoPago({ token: 'tok_decline' }) });
    expectProblem(declined.error, problem('pago-rechazado'));
    expect(declined.error.pago.estado).toBe('RECHAZADO');
    const refundKey = { 'Idempotency-Key': randomUUID() };
    const refusal = { params: { path: { pagoId: declined.error.pago.id }, header: refundKey }, body: { monto: 100 } };
    const notRefundable = await client.POST('/pagos/{pagoId}/reembolsos', refusal);
    expectProblem(notRefundable.error, problem('pago-no-reembolsable'));
    expect(notRefundable.error.estadoPago).toBe('RECHAZADO');
    // @ts-expect-error Only reembolso-excede-pago carries the amounts.
    expect(notRefundable.error.montoReembolsable).toBeUndefined();
    const replayed = await client.POST('/pagos/{pagoId}/reembolsos', refusal);
    expect([replayed.error, replayed.response.headers.get('idempotent-replayed')]).toEqual([notRefundable.error, 'true']);
  });
});

/** Runs a command to its end; fails with its output unless it exits 0. */
async function run(command: string, args: string[]): Promise<void> {
  const child = spawn(path.resolve(command), args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output}`);
}
