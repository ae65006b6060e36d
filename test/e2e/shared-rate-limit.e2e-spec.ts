import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE, BOB, type TestClient } from '../support/clients.js';
import { nuevoPago, postPago } from '../support/http.js';
import { countCharges } from '../support/ledger.js';
import { sampleOf, scrape } from '../support/metrics.js';
import { describeWhenAvailable, REDIS, TEST_REDIS_URL } from '../support/requirements.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

const LIMIT = 10;
const WINDOW_SECONDS = 60;
const REQUESTS = 30;
const STORE_ERRORS = 'rate_limit_store_errors_total';

/**
 * The rate limit of POST /pagos with its counters in Redis (`REDIS_URL`): two service processes
 * share them, and a Redis that goes away makes the limiter fail open rather than stop payments.
 * Real: Redis (the machine's, `REDIS_URL` or 127.0.0.1:6379), the processes, HTTP, PostgreSQL; the
 * outage is a TCP proxy in front of Redis that the test cuts. Each run uses its own key prefix, so
 * parallel runs never share counters. Without a Redis the file is skipped with a line saying so,
 * except under CI.
 */
describeWhenAvailable(REDIS, 'the rate limit in Redis, shared by the replicas', () => {
  let url: string;
  let db: pg.Client;
  const apps: AppProcess[] = [];

  const redisEnv = (redisUrl: string) => ({
    REDIS_URL: redisUrl,
    RATE_LIMIT_REDIS_PREFIX: `pagos-test:${randomUUID()}:`,
    RATE_LIMIT_REQUESTS: String(LIMIT),
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
  });

  beforeAll(async () => {
    url = await createTestDatabase('shared_rate_limit');
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all(apps.map((app) => app.stop()));
  });

  async function start(env: Record<string, string>): Promise<AppProcess> {
    const app = await startAppProcess(url, env);
    apps.push(app);
    return app;
  }

  const pay = (app: AppProcess, client: TestClient = ALICE) => postPago(app.baseUrl, { client, key: randomUUID(), body: nuevoPago() });

  it(`two replicas, a limit of ${LIMIT} per window: of ${REQUESTS} concurrent payments over both, exactly ${LIMIT} are charged`, async () => {
    const env = redisEnv(TEST_REDIS_URL);
    const replicas = await Promise.all([start(env), start(env)]);
    const charges = await countCharges(db);

    const results = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => pay(replicas[i % 2]!)));
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(REQUESTS - LIMIT);
    expect(await countCharges(db)).toBe(charges + LIMIT);
    // Each replica answered some of the 429s: neither could have counted alone.
    expect(new Set(results.flatMap((result, i) => (result.status === 429 ? [i % 2] : [])))).toEqual(new Set([0, 1]));
    // Another client has a counter of its own.
    expect((await pay(replicas[1]!, BOB)).status).toBe(201);
  });

  describe('Redis unreachable', () => {
    let proxy: TcpProxy;
    let app: AppProcess;

    beforeAll(async () => {
      const redis = new URL(TEST_REDIS_URL);
      proxy = await TcpProxy.start(redis.hostname, Number(redis.port || 6379));
      const viaProxy = new URL(TEST_REDIS_URL);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      app = await start(redisEnv(viaProxy.toString()));
    });

    afterEach(async () => {
      if (proxy.isCut) await proxy.restore();
    });

    afterAll(async () => {
      await proxy?.cut();
    });

    it('fails open with a warning and a metric, payments keep flowing, and the limit holds again once Redis is back', async () => {
      for (let i = 0; i < LIMIT; i++) expect((await pay(app)).status).toBe(201);
      expect((await pay(app)).status).toBe(429);
      expect(sampleOf(await scrape(app.baseUrl), STORE_ERRORS)).toBe(0);

      await proxy.cut();
      const charges = await countCharges(db);
      const duringOutage = await Promise.all(Array.from({ length: 5 }, () => pay(app)));
      expect(duringOutage.map((result) => result.status)).toEqual([201, 201, 201, 201, 201]);
      expect(await countCharges(db)).toBe(charges + 5);
      expect(sampleOf(await scrape(app.baseUrl), STORE_ERRORS)).toBe(5);
      // Log lines reach the pipe on their own schedule, possibly after the answers.
      const linesWith = (text: string) => app.output().split('\n').filter((line) => line.includes(text));
      await waitUntil(async () => linesWith('rate-limit store (Redis) unavailable').length > 0);
      const warnings = linesWith('rate-limit store (Redis) unavailable');
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, context: 'RateLimit' });

      await proxy.restore();
      // ioredis reconnects on its own; the window's counter survived in Redis, so the client is still over it.
      await waitUntil(async () => (await pay(app)).status === 429);
      await waitUntil(async () => linesWith('rate-limit store (Redis) reachable again').length === 1);
      expect((await pay(app)).status).toBe(429);
      expect(linesWith('rate-limit store (Redis) unavailable')).toHaveLength(1);
    });
  });
});
