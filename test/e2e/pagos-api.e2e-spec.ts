import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { ALICE, BOB } from '../support/clients.js';
import { checkedFetch, get, type HttpResult, nuevoPago, postJson, postPago } from '../support/http.js';
import { countCharges, countPagos, keyRow } from '../support/ledger.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

// Everything here is real: the app on a loopback port, its local processor over HTTP, PostgreSQL.
describe('the /pagos API contract (real app, real PostgreSQL)', () => {
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('pagos-api');
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

  /** What the processor decided for one key's payment: its intents (found by their metadata) that were charged or declined. */
  async function chargesOf(key: string, client = ALICE): Promise<{ outcome: string; amount: string }[]> {
    const row = await keyRow(db, client.clientId, key);
    const { rows } = await db.query(
      `SELECT CASE WHEN status = 'succeeded' THEN 'approved' ELSE 'declined' END AS outcome, amount::text
         FROM procesador_local.payment_intents
        WHERE metadata->>'operation_id' = $1 AND (status = 'succeeded' OR last_payment_error->>'code' = 'card_declined')
        ORDER BY created`,
      [row!.operation_id],
    );
    return rows;
  }

  async function estadosOf(numeroOrden: string, client = ALICE): Promise<string[]> {
    const { rows } = await db.query('SELECT estado FROM pagos WHERE client_id = $1 AND numero_orden = $2 ORDER BY creado_en', [client.clientId, numeroOrden]);
    return rows.map((row) => row.estado);
  }

  it('an approved payment is a 201 with Location, the payment, one approved charge and a completed key', async () => {
    const key = randomUUID();
    const body = nuevoPago({ monto: 4250, moneda: 'USD' });
    const created = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/json/);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      numeroOrden: body.numeroOrden,
      monto: 4250,
      moneda: 'USD',
      montoReembolsado: 0,
      estado: 'APROBADO',
      creadoEn: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(created.headers.get('location')).toBe(`/pagos/${created.json.id}`);
    expect(await chargesOf(key)).toEqual([{ outcome: 'approved', amount: '4250' }]);
    expect(await estadosOf(body.numeroOrden)).toEqual(['APROBADO']);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'completed', response_status: 201 });
  });

  it('a declined payment is a 402 problem carrying the RECHAZADO payment, with exactly one declined charge', async () => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'tok_decline' });
    const declined = await postPago(app.baseUrl, { client: ALICE, key, body });
    expectProblem(declined, 402, 'pago-rechazado');
    expect(declined.headers.get('location')).toBeNull();
    expect(declined.json.pago).toEqual({
      id: expect.any(String), numeroOrden: body.numeroOrden, monto: body.monto, moneda: 'EUR', montoReembolsado: 0, estado: 'RECHAZADO', motivo: 'tarjeta', creadoEn: expect.any(String),
    });
    expect(await chargesOf(key)).toEqual([{ outcome: 'declined', amount: String(body.monto) }]);
    expect(await estadosOf(body.numeroOrden)).toEqual(['RECHAZADO']);
  });

  it('a single-use card token spent already is a final 402 with motivo "token-usado", stored; nothing charged', async () => {
    const token = `tok_1${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    expect((await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago({ token }) })).status).toBe(201);
    const key = randomUUID();
    const body = nuevoPago({ token });
    const spent = await postPago(app.baseUrl, { client: ALICE, key, body });
    expectProblem(spent, 402, 'pago-rechazado');
    expect(spent.json.pago).toMatchObject({ numeroOrden: body.numeroOrden, estado: 'RECHAZADO', motivo: 'token-usado' });
    expect(spent.json.detail).toMatch(/token was used already/);
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).text).toBe(spent.text);
    expect(await chargesOf(key)).toEqual([]);
  });

  it('a declined order can be paid with a new key: 201, and the order then holds one declined and one approved payment', async () => {
    const body = nuevoPago({ token: 'tok_decline' });
    expect((await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body })).status).toBe(402);
    const key = randomUUID();
    const paid = await postPago(app.baseUrl, { client: ALICE, key, body: { ...body, token: 'tok_mastercard' } });
    expect(paid.status).toBe(201);
    expect(paid.json).toMatchObject({ numeroOrden: body.numeroOrden, estado: 'APROBADO' });
    expect(await chargesOf(key)).toEqual([{ outcome: 'approved', amount: String(body.monto) }]);
    expect(await estadosOf(body.numeroOrden)).toEqual(['RECHAZADO', 'APROBADO']);
  });

  it('a paid order with a new key is a 409 problem naming pagoExistenteId, and nothing is charged again', async () => {
    const body = nuevoPago();
    const paid = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body });
    expect(paid.status).toBe(201);
    const charges = await countCharges(db);
    const conflict = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: { ...body, token: 'tok_amex' } });
    expectProblem(conflict, 409, 'orden-ya-pagada');
    expect(conflict.json.pagoExistenteId).toBe(paid.json.id);
    expect(await countCharges(db)).toBe(charges);
    expect(await estadosOf(body.numeroOrden)).toEqual(['APROBADO']);
  });

  it('an order number is per client: BOB paying the order number ALICE paid gets 201, not 409', async () => {
    const body = nuevoPago();
    expect((await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body })).status).toBe(201);
    expect((await postPago(app.baseUrl, { client: BOB, key: randomUUID(), body })).status).toBe(201);
  });

  it('GET /pagos/:id of an own payment is a 200 equal to the POST answer', async () => {
    const created = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() });
    const fetched = await get(app.baseUrl, created.headers.get('location')!, ALICE);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toMatch(/^application\/json/);
    expect(fetched.json).toEqual(created.json);
  });

  it('paths match regardless of a trailing slash or the case of their fixed parts, as clients of the Express days relied on', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const created = await postJson(app.baseUrl, '/pagos/', { client: ALICE, key, body });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    const fetched = await get(app.baseUrl, location.replace('/pagos/', '/PAGOS/') + '/', ALICE);
    expect(fetched.status).toBe(200);
    expect(fetched.json).toEqual(created.json);
    // The fingerprint covers the target as sent: the same key on `/pagos` is a different request.
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(422);
  });

  it("GET /pagos/:id of another client's payment is the same 404 problem as an unknown id", async () => {
    const created = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() });
    const asBob = await get(app.baseUrl, `/pagos/${created.json.id}`, BOB);
    expectProblem(asBob, 404, 'pago-no-encontrado');
    expect(asBob.text).not.toContain(created.json.numeroOrden);
    const unknown = await get(app.baseUrl, `/pagos/${randomUUID()}`, ALICE);
    expect(asBob.text).toBe(unknown.text);
  });

  it.each(['not-a-uuid', '12345', `${randomUUID()}x`, "1'%20OR%20'1'='1"])('GET /pagos/%s (a malformed id) is a 404 problem', async (id) => {
    expectProblem(await get(app.baseUrl, `/pagos/${id}`, ALICE), 404, 'pago-no-encontrado');
  });

  it('GET /pagos?numeroOrden= lists only the caller\'s own payments of that order, oldest first', async () => {
    const body = nuevoPago();
    const declined = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: { ...body, token: 'tok_decline' } });
    const approved = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body });
    const bobs = await postPago(app.baseUrl, { client: BOB, key: randomUUID(), body });
    await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() });

    const aliceList = await get(app.baseUrl, `/pagos?numeroOrden=${body.numeroOrden}`, ALICE);
    expect(aliceList.status).toBe(200);
    expect(aliceList.json).toEqual([declined.json.pago, approved.json]);
    const bobList = await get(app.baseUrl, `/pagos?numeroOrden=${body.numeroOrden}`, BOB);
    expect(bobList.json).toEqual([bobs.json]);
    expect((await get(app.baseUrl, '/pagos?numeroOrden=ORD-never-used', ALICE)).json).toEqual([]);
  });

  it('GET /pagos pages with desde and limit: 130 payments, ties of one instant included, each once in (creado_en, id) order', async () => {
    // 130 of Bob's written directly, in threes sharing one creado_en (the id breaks the tie), the
    // threes a microsecond apart (a millisecond-rounded cursor would skip or repeat them); listed
    // among Bob's other payments of this file, whatever their order.
    const { rows: written } = await db.query<{ id: string }>(
      `INSERT INTO pagos (id, client_id, operation_id, numero_orden, monto, moneda, estado, creado_en)
       SELECT gen_random_uuid(), 'bob', 'paging-' || n, 'ORD-PAGING-' || n, 100, 'EUR', 'APROBADO',
              timestamptz '2026-01-01T00:00:00Z' + make_interval(secs => (n / 3) * 0.000001)
         FROM generate_series(1, 130) n
       RETURNING id`,
    );
    expect(written).toHaveLength(130);
    const { rows: expected } = await db.query<{ id: string }>(`SELECT id FROM pagos WHERE client_id = 'bob' ORDER BY creado_en, id`);

    const first = await get(app.baseUrl, '/pagos', BOB);
    expect(first.status).toBe(200);
    expect(first.json.map((pago: { id: string }) => pago.id)).toEqual(expected.slice(0, 100).map((row) => row.id));
    const seen: string[] = [];
    let desde: string | undefined;
    // Bounded: a cursor that does not advance would otherwise repeat one page for ever.
    for (let pages = 0; pages < 10; pages++) {
      const page = await get(app.baseUrl, `/pagos?limit=40${desde ? `&desde=${desde}` : ''}`, BOB);
      expect(page.status).toBe(200);
      seen.push(...page.json.map((pago: { id: string }) => pago.id));
      if (page.json.length < 40) break;
      desde = page.json.at(-1).id;
    }
    expect(seen).toEqual(expected.map((row) => row.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(written.map((row) => row.id)));
  });

  it('GET /pagos?numeroOrden=&desde= pages within the order; an unknown or foreign cursor is 404 cursor-de-pagos-desconocido; a bad limit or desde is 400', async () => {
    const body = nuevoPago();
    const declined = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: { ...body, token: 'tok_decline' } });
    const approved = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body });
    const page = await get(app.baseUrl, `/pagos?numeroOrden=${body.numeroOrden}&limit=1`, ALICE);
    expect(page.json).toEqual([declined.json.pago]);
    const next = await get(app.baseUrl, `/pagos?numeroOrden=${body.numeroOrden}&limit=1&desde=${declined.json.pago.id}`, ALICE);
    expect(next.json).toEqual([approved.json]);
    expect((await get(app.baseUrl, `/pagos?numeroOrden=${body.numeroOrden}&desde=${approved.json.id}`, ALICE)).json).toEqual([]);

    const unknown = await get(app.baseUrl, `/pagos?desde=${randomUUID()}`, ALICE);
    expectProblem(unknown, 404, 'cursor-de-pagos-desconocido');
    expectProblem(await get(app.baseUrl, `/pagos?desde=${approved.json.id}`, BOB), 404, 'cursor-de-pagos-desconocido');
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'desde=nope', 'limit=1&limit=2']) {
      expectProblem(await get(app.baseUrl, `/pagos?${query}`, ALICE), 400, 'validation-failed');
    }
  });

  it.each(['ORD%201', 'O'.repeat(65)])('GET /pagos?numeroOrden=%s (not a valid order number) is a 400 problem', async (numeroOrden) => {
    expectProblem(await get(app.baseUrl, `/pagos?numeroOrden=${numeroOrden}`, ALICE), 400, 'validation-failed');
  });

  it.each([
    ['no Authorization header', undefined],
    ['an unknown bearer token', 'Bearer not-a-real-token-0123456789'],
    ['another scheme', `Basic ${Buffer.from(`alice:${ALICE.token}`).toString('base64')}`],
    ['a bare token without scheme', ALICE.token],
  ])('%s is a 401 problem with WWW-Authenticate, on POST (claiming nothing) and on GET', async (_name, authorization) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...(authorization && { authorization }) };
    const body = nuevoPago();
    const charges = await countCharges(db);
    const response = await checkedFetch(`${app.baseUrl}/pagos`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await response.text();
    const posted = { status: response.status, headers: response.headers, text, json: JSON.parse(text) };
    expectProblem(posted, 401, 'unauthenticated');
    expect(posted.headers.get('www-authenticate')).toBe('Bearer realm="pagos"');
    expect(await countPagos(db, 'numero_orden = $1', [body.numeroOrden])).toBe(0);
    expect(await countCharges(db)).toBe(charges);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [headers['idempotency-key']]);
    expect(rows[0].n).toBe(0);

    const listed = await checkedFetch(`${app.baseUrl}/pagos`, { headers: authorization ? { authorization } : {} });
    expect(listed.status).toBe(401);
    expect(listed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(listed.headers.get('www-authenticate')).toBe('Bearer realm="pagos"');
  });

  it('a processor failure is a 502 problem, charges nothing, marks the payment FALLIDO and releases the key', async () => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'tok_error' });
    const charges = await countCharges(db);
    const failed = await postPago(app.baseUrl, { client: ALICE, key, body });
    expectProblem(failed, 502, 'pasarela-no-disponible');
    expect(await countCharges(db)).toBe(charges);
    expect(await chargesOf(key)).toEqual([]);
    expect(await estadosOf(body.numeroOrden)).toEqual(['FALLIDO']);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'released', response_status: null, response_body: null });
  });

  it('a retry of a 502 with the same key runs again (502 again, not a replay) and resumes the same payment', async () => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'tok_error' });
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(502);
    const operationId = (await keyRow(db, ALICE.clientId, key))!.operation_id;

    const retry = await postPago(app.baseUrl, { client: ALICE, key, body });
    expectProblem(retry, 502, 'pasarela-no-disponible');
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'released', operation_id: operationId });
    expect(await countPagos(db, 'operation_id = $1', [operationId])).toBe(1);
    expect(await estadosOf(body.numeroOrden)).toEqual(['FALLIDO']);
    expect(await chargesOf(key)).toEqual([]);
  });

  it('a FALLIDO payment does not block the order: a new key gets 201; the failed key retried then gets 409 naming it', async () => {
    const failedKey = randomUUID();
    const body = nuevoPago({ token: 'tok_error' });
    expect((await postPago(app.baseUrl, { client: ALICE, key: failedKey, body })).status).toBe(502);

    const key = randomUUID();
    const paid = await postPago(app.baseUrl, { client: ALICE, key, body: { ...body, token: 'tok_visa' } });
    expect(paid.status).toBe(201);
    expect(await chargesOf(key)).toEqual([{ outcome: 'approved', amount: String(body.monto) }]);
    expect(await estadosOf(body.numeroOrden)).toEqual(['FALLIDO', 'APROBADO']);

    const charges = await countCharges(db);
    const retry = await postPago(app.baseUrl, { client: ALICE, key: failedKey, body });
    expectProblem(retry, 409, 'orden-ya-pagada');
    expect(retry.json.pagoExistenteId).toBe(paid.json.id);
    expect(await countCharges(db)).toBe(charges);
    expect(await estadosOf(body.numeroOrden)).toEqual(['FALLIDO', 'APROBADO']);
  });
});
