import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { type HttpResult } from '../support/http.js';
import { pagoAprobado, refundTotals } from '../support/refunds.js';
import { connect, createTestDatabase } from '../support/test-database.js';

// Real: the service process on a loopback port, HTTP, PostgreSQL. Every generated request must be
// refused with a 4xx problem that stores no key and refunds nothing, as for payments (hostile-input).
const SEED = 20261203;

const hostileString = fc
  .tuple(fc.string({ maxLength: 12 }), fc.constantFrom('\u0000', '\u0007', '\u001b', '\u007f', '\u0085', '\ud800', '\udfff'), fc.string({ maxLength: 8 }))
  .map(([before, char, after]) => JSON.stringify(before + char + after));
const badMonto = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)).map(String),
  fc.integer({ max: 0 }).map(String),
  fc.bigInt({ min: 10n ** 12n + 1n, max: 10n ** 40n }).map(String),
  fc.constantFrom('1e308', '1e309', '-0', '"100"', 'true', 'null', '[100]', '{"valor":100}', '9007199254740993'),
  hostileString,
);
const badMotivo = fc.oneof(
  hostileString,
  fc.string({ minLength: 201, maxLength: 400 }).filter((text) => [...text].length > 200 || text.length > 200).map((text) => JSON.stringify(text)),
  fc.constantFrom('1', 'true', '[]', '{}', '["x"]'),
);
const body = fc.oneof(
  badMonto.map((monto) => `{"monto":${monto}}`),
  badMotivo.map((motivo) => `{"monto":100,"motivo":${motivo}}`),
  fc.tuple(fc.string({ minLength: 1, maxLength: 20 }).filter((name) => !['monto', 'motivo'].includes(name)), fc.json({ maxDepth: 2 }))
    .map(([name, value]) => `{"monto":100,${JSON.stringify(name)}:${value}}`),
  fc.constantFrom('', '{', 'null', '[]', '"x"', '{"monto":100,}', '{"monto":0x64}'),
);

describe('hostile refund requests are a 4xx problem that stores nothing and refunds nothing (real app, real PostgreSQL)', () => {
  let app: AppProcess;
  let db: pg.Client;
  let pagoId: string;

  beforeAll(async () => {
    const url = await createTestDatabase('hostile_refunds');
    app = await startAppProcess(url);
    db = await connect(url);
    pagoId = await pagoAprobado(app.baseUrl, ALICE, 1000);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  const post = async (path: string, text: string): Promise<HttpResult> => {
    const headers = { authorization: `Bearer ${ALICE.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() };
    const response = await fetch(`${app.baseUrl}${path}`, { method: 'POST', headers, body: text });
    const answer = await response.text();
    let json: any;
    try {
      json = JSON.parse(answer);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text: answer, json };
  };
  const trace = async () => ({
    keys: (await db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE status = 'completed' AND response_status = 201`)).rows[0].n,
    refunds: (await db.query(`SELECT count(*)::int AS n FROM reembolsos`)).rows[0].n,
    totals: await refundTotals(db, pagoId),
  });
  const refused = async (path: string, text: string, status: number): Promise<void> => {
    const before = await trace();
    const result = await post(path, text);
    expect(result.status).toBe(status);
    expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(result.json).toMatchObject({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String) });
    expect(await trace()).toEqual(before);
  };

  it('a body with a bad amount, a bad motivo, unknown fields or no JSON object is a 400 that claims no key', async () => {
    await fc.assert(fc.asyncProperty(body, async (text) => {
      const keysBefore = (await db.query(`SELECT count(*)::int AS n FROM idempotency_keys`)).rows[0].n;
      await refused(`/pagos/${pagoId}/reembolsos`, text, 400);
      expect((await db.query(`SELECT count(*)::int AS n FROM idempotency_keys`)).rows[0].n).toBe(keysBefore);
    }), { seed: SEED, numRuns: 200 });
  });

  it('any path segment that is not one of your payments is a 404 (or a 400/404 from routing), never a 5xx, never a refund', async () => {
    const segment = fc.oneof(
      fc.uuid(),
      fc.string({ minLength: 1, maxLength: 60 }).map((text) => encodeURIComponent(text)),
      fc.constantFrom('..', '%00', '%2e%2e', `${'1'.repeat(300)}`, 'null', "'; DROP TABLE pagos; --"),
    );
    await fc.assert(fc.asyncProperty(segment, async (id) => {
      const before = await trace();
      const result = await post(`/pagos/${id}/reembolsos`, '{"monto":100}');
      expect(result.status).toBeGreaterThanOrEqual(400);
      expect(result.status).toBeLessThan(500);
      expect(await trace()).toEqual(before);
    }), { seed: SEED, numRuns: 150 });
  });
});
