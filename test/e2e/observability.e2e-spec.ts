import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { checkedFetch, get, nuevoPago, postPago } from '../support/http.js';
import { insertExpiredKeys } from '../support/ledger.js';
import { sampleOf, scrape } from '../support/metrics.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

/** Health probes, Prometheus metrics and JSON request logs of the built service, over real HTTP and PostgreSQL. */
describe('health, metrics and logs', () => {
  let url: string;
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    url = await createTestDatabase('observability');
    // No replay cache: the outcomes test rewinds a completed key to in flight, which no statement of the
    // service ever does, and a process that replayed the key would rightly go on replaying it.
    app = await startAppProcess(url, { LOG_LEVEL: 'info', IDEMPOTENCY_REPLAY_CACHE_ENTRIES: '0' });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  const outcomes = async (): Promise<Record<string, number>> => {
    const text = await scrape(app.baseUrl);
    const names = ['executed', 'expired', 'lock_recovered', 'replayed', 'mismatch', 'in_flight_conflict'];
    return Object.fromEntries(names.map((outcome) => [outcome, sampleOf(text, 'idempotency_outcomes_total', { outcome }) ?? NaN]));
  };
  const logLines = (): Array<Record<string, any>> =>
    app
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));

  describe('health', () => {
    it('live and ready answer 200 without a token; ready reports the database and the migrations up', async () => {
      const live = await get(app.baseUrl, '/health/live');
      expect(live.status).toBe(200);
      expect(live.json.status).toBe('ok');
      const ready = await get(app.baseUrl, '/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.json.details).toMatchObject({ database: { status: 'up' }, migrations: { status: 'up' } });
    });

    it('while migrations are pending, ready is a 503 problem naming them and live stays 200', async () => {
      const unmigrated = await startAppProcess(await createTestDatabase('observability_unmigrated'), { DB_MIGRATIONS_RUN: 'false' });
      try {
        const ready = await get(unmigrated.baseUrl, '/health/ready');
        expect(ready.status).toBe(503);
        expect(ready.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(ready.json).toMatchObject({ type: expect.stringContaining('not-ready'), status: 503, checks: { migrations: { status: 'down' } } });
        expect((await get(unmigrated.baseUrl, '/health/live')).status).toBe(200);
      } finally {
        await unmigrated.stop();
      }
    });
  });

  describe('metrics', () => {
    it('count each idempotency outcome once per request', async () => {
      const key = randomUUID();
      const body = nuevoPago();
      const before = await outcomes();
      expect(Object.values(before).every(Number.isFinite)).toBe(true);

      expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);
      expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);
      expect((await postPago(app.baseUrl, { client: ALICE, key, body: { ...body, monto: 1 } })).status).toBe(422);
      // The same key as if its first request were still running, then as if its owner had died.
      await db.query(`UPDATE idempotency_keys SET status = 'in_flight', lock_token = gen_random_uuid(), locked_at = now(),
                      response_status = NULL, response_headers = NULL, response_body = NULL WHERE key = $1`, [key]);
      expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(409);
      await db.query(`UPDATE idempotency_keys SET locked_at = now() - interval '1 hour' WHERE key = $1`, [key]);
      expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);
      await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
      expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(409);

      const after = await outcomes();
      const delta = Object.fromEntries(Object.entries(after).map(([outcome, value]) => [outcome, value - before[outcome]!]));
      expect(delta).toEqual({ executed: 1, replayed: 1, mismatch: 1, in_flight_conflict: 1, lock_recovered: 1, expired: 1 });
    });

    it('count requests by route pattern and status with a latency histogram, and show the database pool', async () => {
      await get(app.baseUrl, `/pagos/${randomUUID()}`, ALICE);
      await get(app.baseUrl, '/no-such-route', ALICE);
      const text = await scrape(app.baseUrl);
      expect(sampleOf(text, 'http_requests_total', { method: 'GET', route: '/pagos/:id', status: '404' })).toBeGreaterThanOrEqual(1);
      expect(sampleOf(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
      expect(sampleOf(text, 'http_requests_total', { method: 'POST', route: '/pagos', status: '201' })).toBeGreaterThanOrEqual(1);
      const labels = { method: 'GET', route: '/pagos/:id', status: '404' };
      expect(sampleOf(text, 'http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(1);
      expect(sampleOf(text, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBeGreaterThanOrEqual(1);
      expect(sampleOf(text, 'db_pool_max_connections')).toBe(10);
      expect(sampleOf(text, 'db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
      expect(sampleOf(text, 'db_pool_connections', { state: 'waiting' })).toBe(0);
      expect(sampleOf(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    });

    it('count purge runs and the keys they deleted', async () => {
      await insertExpiredKeys(db, 1_500, 'metrics-purge-');
      const purging = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false', IDEMPOTENCY_PURGE_CRON: '* * * * * *' });
      try {
        await waitUntil(async () => (sampleOf(await scrape(purging.baseUrl), 'idempotency_purged_keys_total') ?? 0) >= 1_500);
        const text = await scrape(purging.baseUrl);
        expect(sampleOf(text, 'idempotency_purge_runs_total', { result: 'success' })).toBeGreaterThanOrEqual(1);
        expect(sampleOf(text, 'idempotency_purge_runs_total', { result: 'failure' })).toBe(0);
      } finally {
        await purging.stop();
      }
    });
  });

  describe('logs', () => {
    it('are JSON lines; each request has one with its id, client, idempotency outcome, status and duration', async () => {
      const requestId = `obs-${randomUUID()}`;
      const answer = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago(), headers: { 'x-request-id': requestId } });
      expect(answer.headers.get('x-request-id')).toBe(requestId);
      await waitUntil(async () => logLines().some((line) => line.req?.id === requestId));
      const lines = logLines().filter((line) => line.req?.id === requestId);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        level: 30,
        clientId: 'alice',
        idempotency: 'executed',
        req: { id: requestId, method: 'POST', url: '/pagos' },
        res: { statusCode: 201 },
        durationMs: expect.any(Number),
        msg: 'request completed',
      });
    });

    it('include requests refused before routing, such as malformed JSON', async () => {
      const requestId = `obs-${randomUUID()}`;
      const refused = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: {}, rawBody: '{"monto":', headers: { 'x-request-id': requestId } });
      expect(refused.status).toBe(400);
      expect(refused.headers.get('x-request-id')).toBe(requestId);
      await waitUntil(async () => logLines().some((line) => line.req?.id === requestId));
      expect(logLines().find((line) => line.req?.id === requestId)).toMatchObject({ res: { statusCode: 400 }, req: { url: '/pagos' } });
    });

    it('replace an X-Request-Id that is not a plain token with a generated UUID', async () => {
      const answer = await get(app.baseUrl, '/pagos', ALICE);
      expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const forged = await checkedFetch(`${app.baseUrl}/pagos`, {
        headers: { authorization: `Bearer ${ALICE.token}`, 'x-request-id': 'a b {"level":60}' },
      });
      expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('are human-readable lines with LOG_FORMAT=pretty, the development setting', async () => {
      const pretty = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false', LOG_FORMAT: 'pretty' });
      try {
        const line = pretty.output().split('\n').find((text) => text.includes('pagos listening on port'))!;
        expect(line).toMatch(/INFO/);
        expect(() => JSON.parse(line)).toThrow();
      } finally {
        await pretty.stop();
      }
    });

    it('never carry the bearer token, the card token or the body', async () => {
      const cardToken = `tok_card_${randomUUID()}`;
      await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago({ token: cardToken }) });
      await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: { ...nuevoPago({ token: cardToken }), monto: 'x' } });
      await waitUntil(async () => logLines().filter((line) => line.req?.method === 'POST').length >= 3);
      const output = app.output();
      expect(output).not.toContain(cardToken);
      expect(output).not.toContain(ALICE.token);
      expect(output).not.toContain('numeroOrden');
      expect(output.toLowerCase()).not.toContain('authorization');
    });
  });
});
