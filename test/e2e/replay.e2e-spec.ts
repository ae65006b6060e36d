import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { ALICE, BOB } from '../support/clients.js';
import { countCharges, countPagos } from '../support/ledger.js';
import { nuevoPago, postPago } from '../support/http.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

describe('replaying a completed key (real app, real PostgreSQL)', () => {
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('replay');
    app = await startAppProcess(url);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  it.each([
    ['201 approved', 'tok_visa', 201],
    ['402 declined', 'tok_decline', 402],
  ])('a retry of a %s gets the stored status, headers and byte-identical body, without charging again', async (_name, token, status) => {
    const key = randomUUID();
    const body = nuevoPago({ token });
    const first = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(first.status).toBe(status);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const chargesAfterFirst = await countCharges(db);

    for (let attempt = 0; attempt < 3; attempt++) {
      const retry = await postPago(app.baseUrl, { client: ALICE, key, body });
      expect(retry.status).toBe(status);
      expect(retry.text).toBe(first.text);
      expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(retry.headers.get('location')).toBe(first.headers.get('location'));
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
    }
    expect(await countCharges(db)).toBe(chargesAfterFirst);
    expect(await countPagos(db, 'numero_orden = $1', [body.numeroOrden])).toBe(1);
  });

  it('a 201 carries Location and the payment; its replay names the same payment', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(first.status).toBe(201);
    expect(first.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      numeroOrden: body.numeroOrden,
      monto: body.monto,
      moneda: 'EUR',
      montoReembolsado: 0,
      estado: 'APROBADO',
      creadoEn: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(first.headers.get('location')).toBe(`/pagos/${first.json.id}`);
  });

  it('a stored 409 (order already paid under another key) is replayed as is', async () => {
    const body = nuevoPago();
    const paid = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body });
    expect(paid.status).toBe(201);
    const key = randomUUID();
    const conflict = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(conflict.status).toBe(409);
    expect(conflict.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(conflict.json.pagoExistenteId).toBe(paid.json.id);
    const replay = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(replay.status).toBe(409);
    expect(replay.text).toBe(conflict.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await countCharges(db, 'amount = $1', [body.monto])).toBeGreaterThanOrEqual(1);
    expect(await countPagos(db, 'numero_orden = $1', [body.numeroOrden])).toBe(1);
  });

  it('key order and whitespace of the body do not change the fingerprint', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = await postPago(app.baseUrl, { client: ALICE, key, body });
    const reordered = `{ "token": "${body.token}",\n  "moneda":"${body.moneda}", "monto": ${body.monto}, "numeroOrden": "${body.numeroOrden}" }`;
    const retry = await postPago(app.baseUrl, { client: ALICE, key, body, rawBody: reordered });
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('the same key with a different body is a 422 problem and executes nothing', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    await postPago(app.baseUrl, { client: ALICE, key, body });
    const charges = await countCharges(db);
    const pagos = await countPagos(db);
    const other = { ...body, monto: body.monto + 1 };
    const mismatch = await postPago(app.baseUrl, { client: ALICE, key, body: other });
    expect(mismatch.status).toBe(422);
    expect(mismatch.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(mismatch.json).toMatchObject({ status: 422, type: expect.stringContaining('idempotency-key-reused') });
    expect(await countCharges(db)).toBe(charges);
    expect(await countPagos(db)).toBe(pagos);
  });

  it('a bare key and the same key as a quoted structured-field string are one key', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = await postPago(app.baseUrl, { client: ALICE, key, body });
    const quoted = await postPago(app.baseUrl, { client: ALICE, key: `"${key}"`, body });
    expect(quoted.status).toBe(201);
    expect(quoted.text).toBe(first.text);
    expect(quoted.headers.get('idempotent-replayed')).toBe('true');
  });

  it("client B using client A's key value starts its own operation and never sees A's answer", async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const alice = await postPago(app.baseUrl, { client: ALICE, key, body });
    const bob = await postPago(app.baseUrl, { client: BOB, key, body });
    expect(alice.status).toBe(201);
    expect(bob.status).toBe(201);
    expect(bob.headers.get('idempotent-replayed')).toBeNull();
    expect(bob.json.id).not.toBe(alice.json.id);
    const bobMismatch = await postPago(app.baseUrl, { client: BOB, key, body: { ...body, monto: 1 } });
    expect(bobMismatch.status).toBe(422);
    const aliceReplay = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(aliceReplay.text).toBe(alice.text);
  });
});
