import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE, BOB, type TestClient } from '../support/clients.js';
import { get, type HttpResult, nuevoPago, postPago, postReembolso } from '../support/http.js';
import { keyRow } from '../support/ledger.js';
import { sampleOf, scrape } from '../support/metrics.js';
import { countRefunds, pagoAprobado, processorRefundsOf, refundTotals } from '../support/refunds.js';
import { connect, createTestDatabase } from '../support/test-database.js';

// Everything here is real: the app on a loopback port, its local processor over HTTP, PostgreSQL.
describe('the /pagos/{id}/reembolsos API contract (real app, real PostgreSQL)', () => {
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('reembolsos-api');
    app = await startAppProcess(url);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  function expectProblem(result: HttpResult, status: number, slug: string): void {
    expect(result.status).toBe(status);
    expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(result.json).toMatchObject({ type: `https://pagos.dev/problems/${slug}`, title: expect.any(String), status, detail: expect.any(String) });
  }
  const refund = (pagoId: string, body: unknown, key = randomUUID(), client: TestClient = ALICE) => postReembolso(app.baseUrl, pagoId, { client, key, body });
  const refunds = async (result: string) => sampleOf(await scrape(app.baseUrl), 'pagos_refunds_total', { result }) ?? 0;

  it('a refund is a 201 with Location and the refund; the processor refunded once under reembolso-<operation>, and the payment shows it', async () => {
    const pagoId = await pagoAprobado(app.baseUrl, ALICE, 1000);
    const approvedBefore = await refunds('approved');
    const key = randomUUID();
    const created = await refund(pagoId, { monto: 300, motivo: 'producto devuelto' }, key);
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), pagoId, monto: 300, moneda: 'EUR', motivo: 'producto devuelto', estado: 'APROBADO',
      creadoEn: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(created.headers.get('location')).toBe(`/pagos/${pagoId}/reembolsos/${created.json.id}`);
    expect(await processorRefundsOf(db, ALICE, key)).toEqual([{ amount: 300 }]);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'completed', response_status: 201 });
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 300, reembolsado: 300, aprobados: 300, procesador: 300 });
    expect(await refunds('approved')).toBe(approvedBefore + 1);

    expect((await get(app.baseUrl, `/pagos/${pagoId}`, ALICE)).json).toMatchObject({ id: pagoId, monto: 1000, montoReembolsado: 300, estado: 'APROBADO' });
    const one = await get(app.baseUrl, created.headers.get('location')!, ALICE);
    expect(one.status).toBe(200);
    expect(one.text).toBe(created.text);
    const withoutMotivo = await refund(pagoId, { monto: 200 });
    expect(withoutMotivo.json).toMatchObject({ monto: 200, motivo: null });
    const listed = await get(app.baseUrl, `/pagos/${pagoId}/reembolsos`, ALICE);
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual([created.json, withoutMotivo.json]);
  });

  it('partial refunds add up to the payment; beyond it a stored 409 reembolso-excede-pago says what is left, and nothing more is refunded', async () => {
    const pagoId = await pagoAprobado(app.baseUrl, ALICE, 1000);
    expect((await refund(pagoId, { monto: 600 })).status).toBe(201);
    const key = randomUUID();
    const exceeded = await refund(pagoId, { monto: 401 }, key);
    expectProblem(exceeded, 409, 'reembolso-excede-pago');
    expect(exceeded.json).toMatchObject({ montoSolicitado: 401, montoReembolsable: 400 });
    expect(exceeded.headers.get('retry-after')).toBeNull();
    // Final for this key and amount: stored and replayed, even once the rest has been refunded.
    expect((await refund(pagoId, { monto: 400 })).status).toBe(201);
    const replay = await refund(pagoId, { monto: 401 }, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(exceeded.text);
    expectProblem(await refund(pagoId, { monto: 1 }), 409, 'reembolso-excede-pago');
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 1000, reembolsado: 1000, aprobados: 1000, procesador: 1000 });
    expect((await get(app.baseUrl, `/pagos/${pagoId}`, ALICE)).json.montoReembolsado).toBe(1000);
  });

  it('same key and body: the stored answer byte for byte; other body or another payment\'s path with that key: 422; one refund', async () => {
    const pagoId = await pagoAprobado(app.baseUrl, ALICE);
    const other = await pagoAprobado(app.baseUrl, ALICE);
    const key = randomUUID();
    const first = await refund(pagoId, { monto: 100 }, key);
    expect(first.status).toBe(201);
    const replay = await refund(pagoId, { motivo: undefined, monto: 100 }, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    expect(replay.text).toBe(first.text);
    expectProblem(await refund(pagoId, { monto: 101 }, key), 422, 'idempotency-key-reused');
    expectProblem(await refund(pagoId, { monto: 100, motivo: 'otro' }, key), 422, 'idempotency-key-reused');
    expectProblem(await refund(other, { monto: 100 }, key), 422, 'idempotency-key-reused');
    expectProblem(await postPago(app.baseUrl, { client: ALICE, key, body: nuevoPago() }), 422, 'idempotency-key-reused');
    expect(await processorRefundsOf(db, ALICE, key)).toEqual([{ amount: 100 }]);
    expect(await refundTotals(db, other)).toMatchObject({ reservado: 0, procesador: 0 });
  });

  it("someone else's, an unknown or a malformed payment id is a 404, as for GET /pagos/{id}; nothing is refunded", async () => {
    const pagoId = await pagoAprobado(app.baseUrl, ALICE);
    expectProblem(await refund(pagoId, { monto: 100 }, randomUUID(), BOB), 404, 'pago-no-encontrado');
    expectProblem(await get(app.baseUrl, `/pagos/${pagoId}/reembolsos`, BOB), 404, 'pago-no-encontrado');
    expectProblem(await refund(randomUUID(), { monto: 100 }), 404, 'pago-no-encontrado');
    expectProblem(await refund('not-a-uuid', { monto: 100 }), 404, 'pago-no-encontrado');
    expectProblem(await get(app.baseUrl, `/pagos/${randomUUID()}/reembolsos`, ALICE), 404, 'pago-no-encontrado');
    expectProblem(await get(app.baseUrl, `/pagos/${pagoId}/reembolsos/${randomUUID()}`, ALICE), 404, 'reembolso-no-encontrado');
    expect((await get(app.baseUrl, `/pagos/${pagoId}/reembolsos`, ALICE)).json).toEqual([]);
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 0, reembolsado: 0, aprobados: 0, procesador: 0 });
  });

  it('a declined payment is a stored 409 pago-no-reembolsable; a payment still PENDIENTE is one with Retry-After, not stored', async () => {
    const declined = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago({ token: 'tok_decline' }) });
    const key = randomUUID();
    const refused = await refund(declined.json.pago.id, { monto: 100 }, key);
    expectProblem(refused, 409, 'pago-no-reembolsable');
    expect(refused.json.estadoPago).toBe('RECHAZADO');
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'completed', response_status: 409 });

    const pendiente = randomUUID();
    await db.query(
      `INSERT INTO pagos (id, client_id, operation_id, numero_orden, monto, moneda, estado) VALUES ($1, 'alice', gen_random_uuid(), $2, 1000, 'EUR', 'PENDIENTE')`,
      [pendiente, `ORD-${pendiente.slice(0, 8)}`],
    );
    const pendingKey = randomUUID();
    const wait = await refund(pendiente, { monto: 100 }, pendingKey);
    expectProblem(wait, 409, 'pago-no-reembolsable');
    expect(wait.headers.get('retry-after')).toBe('2');
    expect(await keyRow(db, ALICE.clientId, pendingKey)).toMatchObject({ status: 'released' });
    expect(await countRefunds(db, 'pago_id IN ($1, $2)', [declined.json.pago.id, pendiente])).toBe(0);
  });

  it('amount 0, negative, decimal, huge or not a number, a long motivo and unknown fields are 400 problems that store nothing', async () => {
    const pagoId = await pagoAprobado(app.baseUrl, ALICE);
    const bodies = [
      { monto: 0 }, { monto: -5 }, { monto: 10.5 }, { monto: 1e13 }, { monto: 2 ** 53 + 1 }, { monto: '100' }, {}, { monto: null },
      { monto: 100, motivo: 'x'.repeat(201) }, { monto: 100, motivo: 7 }, { monto: 100, motivo: 'a\u0000b' }, { monto: 100, extra: true },
    ];
    for (const body of bodies) {
      const key = randomUUID();
      expectProblem(await refund(pagoId, body, key), 400, 'validation-failed');
      expect(await keyRow(db, ALICE.clientId, key)).toBeUndefined();
    }
    expect(await countRefunds(db, 'pago_id = $1', [pagoId])).toBe(0);
    expect((await refund(pagoId, { monto: 100, motivo: 'x'.repeat(200) })).status).toBe(201);
  });

  it('a processor 500 is indeterminate: 503 with Retry-After, the refund stays PENDIENTE with its amount held, the key released; the retry resends the same key', async () => {
    const pagoId = await pagoAprobado(app.baseUrl, ALICE, 1000);
    const key = randomUUID();
    // The local processor fails refunds of exactly 13 with a 500 before any work (as tok_error fails charges) and keeps it under the key.
    const failed = await refund(pagoId, { monto: 13 }, key);
    expectProblem(failed, 503, 'procesador-sin-respuesta');
    expect(failed.headers.get('retry-after')).toBe('5');
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'released', response_status: null });
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 13, reembolsado: 0, aprobados: 0, procesador: 0 });
    expect((await get(app.baseUrl, `/pagos/${pagoId}/reembolsos`, ALICE)).json).toMatchObject([{ monto: 13, estado: 'PENDIENTE' }]);
    const { rows } = await db.query(`SELECT intento_procesador FROM reembolsos WHERE pago_id = $1`, [pagoId]);
    expect(rows).toEqual([{ intento_procesador: 1 }]);

    // The same key at the processor replays its 500, and the listing still shows nothing: never a second key from the route.
    const retry = await refund(pagoId, { monto: 13 }, key);
    expectProblem(retry, 503, 'procesador-sin-respuesta');
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await countRefunds(db, 'pago_id = $1 AND intento_procesador = 1', [pagoId])).toBe(1);
    // What is left is refundable meanwhile.
    expect((await refund(pagoId, { monto: 987 })).status).toBe(201);
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 1000, reembolsado: 987, aprobados: 987, procesador: 987 });
  });
});
