import { randomUUID } from 'node:crypto';
import { connect as connectSocket } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { ALICE } from '../support/clients.js';
import { checkAnswer } from '../support/contract.js';
import { checkedFetch, type HttpResult, nuevoPago, type PagoBody, postPago } from '../support/http.js';
import { countCharges, countPagos, keyRow } from '../support/ledger.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

// Everything here is real: the app on a loopback port, its validation, PostgreSQL. Nothing is faked.
describe('Idempotency-Key and body validation, answered before the key is claimed (real app, real PostgreSQL)', () => {
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('request-validation');
    app = await startAppProcess(url);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  function expectProblem(result: HttpResult, status: number, slug?: string): void {
    expect(result.status).toBe(status);
    expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(result.json).toMatchObject({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String) });
    if (slug) expect(result.json.type).toBe(`https://pagos.dev/problems/${slug}`);
  }

  async function countKeys(): Promise<number> {
    const { rows } = await db.query('SELECT count(*)::int AS n FROM idempotency_keys');
    return rows[0].n;
  }

  /** Asserts that a rejected request left no trace: no key row, no payment, no charge. */
  async function expectNothingStored(key: string | undefined, numeroOrden: string, chargesBefore: number): Promise<void> {
    if (key !== undefined) expect(await keyRow(db, ALICE.clientId, key)).toBeUndefined();
    expect(await countPagos(db, 'numero_orden = $1', [numeroOrden])).toBe(0);
    expect(await countCharges(db)).toBe(chargesBefore);
  }

  /** POSTs over a bare socket, byte for byte: fetch and node:http refuse to send control bytes in a header. */
  async function postWithRawKey(key: string, body: unknown): Promise<HttpResult> {
    const answer = await sendWithRawKey(key, body);
    await checkAnswer(`${app.baseUrl}/pagos`, 'POST', answer);
    return answer;
  }

  function sendWithRawKey(key: string, body: unknown): Promise<HttpResult> {
    const { hostname, port } = new URL(app.baseUrl);
    const payload = JSON.stringify(body);
    const head = [
      'POST /pagos HTTP/1.1', `Host: ${hostname}:${port}`, `Authorization: Bearer ${ALICE.token}`, 'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(payload)}`, `Idempotency-Key: ${key}`, 'Connection: close',
    ].join('\r\n');
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connectSocket(Number(port), hostname, () => socket.end(Buffer.from(`${head}\r\n\r\n${payload}`, 'latin1')));
      socket.on('data', (chunk: Buffer) => chunks.push(chunk)).on('error', reject).on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const [headText = '', text = ''] = raw.split(/\r\n\r\n(.*)/s);
        const [statusLine = '', ...lines] = headText.split('\r\n');
        const headers = new Headers(lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: Number(statusLine.split(' ')[1]), headers, text, json });
      });
    });
  }

  it('a request without Idempotency-Key is a 400 problem and claims, charges and records nothing', async () => {
    const body = nuevoPago();
    const [keys, charges] = [await countKeys(), await countCharges(db)];
    const result = await postPago(app.baseUrl, { client: ALICE, body });
    expectProblem(result, 400, 'idempotency-key-invalid');
    expect(await countKeys()).toBe(keys);
    await expectNothingStored(undefined, body.numeroOrden, charges);
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['an empty value', ''],
    ['a space inside', 'key with-space'],
    ['a Latin-1 byte inside', `clave-ñ-${randomUUID()}`],
    ['an unterminated quoted string', `"${randomUUID()}`],
  ])('an Idempotency-Key with %s is a 400 problem and claims nothing', async (_name, key) => {
    const body = nuevoPago();
    const [keys, charges] = [await countKeys(), await countCharges(db)];
    const result = await postPago(app.baseUrl, { client: ALICE, key, body });
    expectProblem(result, 400, 'idempotency-key-invalid');
    expect(await countKeys()).toBe(keys);
    await expectNothingStored(key, body.numeroOrden, charges);
  });

  it('an Idempotency-Key with a raw tab byte inside is a 400 problem and claims nothing', async () => {
    const key = `raw\tinside-${randomUUID()}`;
    const body = nuevoPago();
    const [keys, charges] = [await countKeys(), await countCharges(db)];
    const result = await postWithRawKey(key, body);
    expectProblem(result, 400, 'idempotency-key-invalid');
    expect(await countKeys()).toBe(keys);
    await expectNothingStored(key, body.numeroOrden, charges);
  });

  // Fastify's router refuses these before any hook or route runs (its frameworkErrors); plain fetch, as
  // no route of the OpenAPI document is chosen for them.
  it.each([
    ['a path that does not percent-decode', '/pagos/%zz', 400, 'malformed-request'],
    ['a truncated UTF-8 escape in the path', '/pagos/%E0%A4%A', 400, 'malformed-request'],
    ['a path parameter over the router\'s length limit', `/pagos/${'a'.repeat(150)}`, 414, 'uri-too-long'],
  ])('%s is a problem+json answer with a request id, not Fastify\'s bare JSON', async (_name, path, status, slug) => {
    const response = await fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${ALICE.token}`, 'x-request-id': 'trace-0123' } });
    const text = await response.text();
    expectProblem({ status: response.status, headers: response.headers, text, json: JSON.parse(text) }, status, slug);
    expect(response.headers.get('x-request-id')).toBe('trace-0123');
    expect(text).not.toContain('aaaaaaaaaa');
    expect(text).not.toContain('FST_ERR');
  });

  // Node's HTTP parser refuses DEL and the other control bytes in a header before Fastify runs;
  // the server's clientError handler still answers with a problem.
  it.each([
    ['DEL (0x7f)', '\x7f'],
    ['a control byte (0x01)', '\x01'],
  ])('an Idempotency-Key with %s inside, sent as a raw byte, is a 400 problem and claims nothing', async (_name, byte) => {
    const body = nuevoPago();
    const [keys, charges] = [await countKeys(), await countCharges(db)];
    const result = await postWithRawKey(`raw${byte}inside-${randomUUID()}`, body);
    expectProblem(result, 400, 'malformed-request');
    expect(await countKeys()).toBe(keys);
    await expectNothingStored(undefined, body.numeroOrden, charges);
  });

  it('two Idempotency-Key headers are a 400 problem, not a claim of either', async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    const body = nuevoPago();
    const headers = new Headers({ authorization: `Bearer ${ALICE.token}`, 'content-type': 'application/json' });
    headers.append('idempotency-key', first);
    headers.append('idempotency-key', second);
    const response = await checkedFetch(`${app.baseUrl}/pagos`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await response.text();
    expectProblem({ status: response.status, headers: response.headers, text, json: JSON.parse(text) }, 400, 'idempotency-key-invalid');
    expect(await keyRow(db, ALICE.clientId, first)).toBeUndefined();
    expect(await keyRow(db, ALICE.clientId, second)).toBeUndefined();
  });

  it('an Idempotency-Key of exactly 255 printable characters is accepted and stored as sent', async () => {
    const key = `${randomUUID()}-`.padEnd(255, 'x~!');
    expect(key).toHaveLength(255);
    const result = await postPago(app.baseUrl, { client: ALICE, key, body: nuevoPago() });
    expect(result.status).toBe(201);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'completed', response_status: 201 });
  });

  // Each invalid body is the corrected body with one defect, so its order number is the one checked.
  const without = (field: keyof PagoBody) => (base: PagoBody): Partial<PagoBody> => {
    const { [field]: _omitted, ...rest } = base;
    return rest;
  };
  it.each<[string, (base: PagoBody) => unknown]>([
    ['monto 1.5 (not an integer)', (base) => ({ ...base, monto: 1.5 })],
    ['monto "100" (a string)', (base) => ({ ...base, monto: '100' })],
    ['monto 0', (base) => ({ ...base, monto: 0 })],
    ['monto -100', (base) => ({ ...base, monto: -100 })],
    ['monto 10^12 + 1', (base) => ({ ...base, monto: 1_000_000_000_001 })],
    ['monto null', (base) => ({ ...base, monto: null })],
    ['moneda "eur" (lower case)', (base) => ({ ...base, moneda: 'eur' })],
    ['moneda "XYZ" (not ISO 4217)', (base) => ({ ...base, moneda: 'XYZ' })],
    ['moneda "EURO"', (base) => ({ ...base, moneda: 'EURO' })],
    ['numeroOrden of 65 characters', (base) => ({ ...base, numeroOrden: base.numeroOrden.padEnd(65, '0') })],
    ['numeroOrden with a space', (base) => ({ ...base, numeroOrden: `${base.numeroOrden} 1` })],
    ['numeroOrden empty', (base) => ({ ...base, numeroOrden: '' })],
    ['token with a space', (base) => ({ ...base, token: 'tok visa' })],
    ['an unknown extra field', (base) => ({ ...base, descuento: 5 })],
    ['monto missing', without('monto')],
    ['token missing', without('token')],
    ['a JSON array instead of an object', (base) => [base]],
  ])('a body with %s is a 400 problem, is not stored under its key, and the corrected body with the same key gets 201', async (_name, spoil) => {
    const key = randomUUID();
    const corrected = nuevoPago();
    const charges = await countCharges(db);
    const rejected = await postPago(app.baseUrl, { client: ALICE, key, body: spoil(corrected) });
    expectProblem(rejected, 400, 'validation-failed');
    expect(rejected.json.errors).toEqual(expect.arrayContaining([expect.any(String)]));
    await expectNothingStored(key, corrected.numeroOrden, charges);

    const accepted = await postPago(app.baseUrl, { client: ALICE, key, body: corrected });
    expect(accepted.status).toBe(201);
    expect(accepted.headers.get('idempotent-replayed')).toBeNull();
    expect(await countCharges(db)).toBe(charges + 1);
  });

  it.each([
    [1e20, 'monto must be at most 1000000000000'],
    [-1e20, 'monto must be at least 1'],
    [2 ** 53 + 2, 'monto must be at most 1000000000000'],
  ])('a whole monto of %d, past 2^53 where it stops being exact, is told the bound it breaks', async (monto, message) => {
    const rejected = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: { ...nuevoPago(), monto } });
    expectProblem(rejected, 400, 'validation-failed');
    expect(rejected.json.errors).toEqual([message]);
  });

  it('every defect of a body is listed, each naming its field: missing, of the wrong type, out of range, unknown', async () => {
    const { token: _token, ...withoutToken } = nuevoPago();
    const body = { ...withoutToken, numeroOrden: 42, monto: 19.99, moneda: 'XYZ', descuento: 5 };
    const rejected = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: body as unknown as PagoBody });
    expectProblem(rejected, 400, 'validation-failed');
    expect([...rejected.json.errors].sort()).toEqual([
      'Unrecognized key: "descuento"',
      'moneda must be an ISO 4217 currency code such as "EUR"',
      'monto must be an integer amount in minor units (e.g. 1999 for 19.99)',
      'numeroOrden must be a string',
      'token is required',
    ]);
  });

  it.each<[string, (base: PagoBody) => string]>([
    ['invalid JSON text', (base) => JSON.stringify(base).slice(0, -10)],
    ['a bare JSON string', (base) => JSON.stringify(JSON.stringify(base))],
    ['an empty body', () => ''],
  ])('%s is a 400 problem, is not stored under its key, and the valid body with the same key gets 201', async (_name, spoil) => {
    const key = randomUUID();
    const corrected = nuevoPago();
    const charges = await countCharges(db);
    const rejected = await postPago(app.baseUrl, { client: ALICE, key, body: undefined, rawBody: spoil(corrected) });
    expectProblem(rejected, 400);
    await expectNothingStored(key, corrected.numeroOrden, charges);

    const accepted = await postPago(app.baseUrl, { client: ALICE, key, body: corrected });
    expect(accepted.status).toBe(201);
    expect(accepted.headers.get('idempotent-replayed')).toBeNull();
  });

  it('the boundaries are valid: numeroOrden of 64 characters is paid; monto 1 and 10^12 pass validation and the processor refuses them', async () => {
    const longest = nuevoPago({ numeroOrden: randomUUID().padEnd(64, '._-') });
    const paid = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: longest });
    expect(paid.status).toBe(201);
    expect(paid.json).toMatchObject({ numeroOrden: longest.numeroOrden, estado: 'APROBADO' });
    // Below Stripe's 50-cent minimum, above its 8-digit maximum: the processor's final answer, stored, never a 500.
    for (const [monto, reason] of [[1, /at least/], [1_000_000_000_000, /no more than/]] as const) {
      const key = randomUUID();
      const body = nuevoPago({ monto });
      const refused = await postPago(app.baseUrl, { client: ALICE, key, body });
      expect(refused.status).toBe(422);
      expect(refused.json).toMatchObject({ type: expect.stringMatching(/importe-no-admitido$/), pago: { monto, estado: 'RECHAZADO', motivo: 'importe-no-admitido' } });
      expect(refused.json.detail).toMatch(reason);
      expect((await postPago(app.baseUrl, { client: ALICE, key, body })).text).toBe(refused.text);
      expect((await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: { ...body, monto: 1999 } })).status).toBe(201);
    }
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded'])('a %s body is a 415 problem and claims nothing; the same key then works as JSON', async (contentType) => {
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const result = await postPago(app.baseUrl, { client: ALICE, key, body, headers: { 'content-type': contentType } });
    expectProblem(result, 415, 'unsupported-media-type');
    await expectNothingStored(key, body.numeroOrden, charges);
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);
  });

  it('a body over 64 kB is a 413 problem and claims nothing; the same key then works with a normal body', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const result = await postPago(app.baseUrl, { client: ALICE, key, body: { ...body, relleno: 'x'.repeat(70 * 1024) } });
    expectProblem(result, 413);
    await expectNothingStored(key, body.numeroOrden, charges);
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('a %s-encoded JSON body is read like a plain one: 201, and its retry in plain JSON is the replay', async (encoding, compress) => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = await postPago(app.baseUrl, { client: ALICE, key, body, rawBody: compress(JSON.stringify(body)), headers: { 'content-encoding': encoding } });
    expect(first.status).toBe(201);
    const retry = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(first.text);
  });

  it('an unknown Content-Encoding, or a body that does not inflate, is a problem and claims nothing', async () => {
    const body = nuevoPago();
    const charges = await countCharges(db);
    const unknownKey = randomUUID();
    expectProblem(await postPago(app.baseUrl, { client: ALICE, key: unknownKey, body, headers: { 'content-encoding': 'compress' } }), 415, 'unsupported-media-type');
    const brokenKey = randomUUID();
    expectProblem(await postPago(app.baseUrl, { client: ALICE, key: brokenKey, body, headers: { 'content-encoding': 'gzip' } }), 400, 'malformed-json');
    await expectNothingStored(unknownKey, body.numeroOrden, charges);
    await expectNothingStored(brokenKey, body.numeroOrden, charges);
  });
});
