import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { ALICE } from '../support/clients.js';
import { countCharges } from '../support/ledger.js';
import { get, nuevoPago, postPago } from '../support/http.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

/** The service reaches PostgreSQL through a loopback TCP proxy the test cuts and restores. */
describe('when the database is unreachable', () => {
  let app: AppProcess;
  let db: pg.Client;
  let proxy: TcpProxy;

  beforeAll(async () => {
    const url = await createTestDatabase('database_unavailable');
    let viaProxy: string;
    ({ proxy, viaProxy } = await TcpProxy.inFrontOf(url));
    app = await startAppProcess(viaProxy);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await proxy?.restore().catch(() => undefined);
    await app?.stop();
    await proxy?.cut();
  });

  it('answers 503 problem+json with Retry-After, stays up, and the same key succeeds once the database is back', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    await proxy.cut();
    const during = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(during.status).toBe(503);
    expect(during.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(during.headers.get('retry-after')).toBe('2');
    expect(during.json).toMatchObject({ status: 503, type: expect.stringContaining('service-unavailable') });
    expect(JSON.stringify(during.json)).not.toMatch(/ECONN|127\.0\.0\.1|SELECT|INSERT/);
    expect(await countCharges(db)).toBe(0);

    await proxy.restore();
    const after = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(after.status).toBe(201);
    const replay = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(replay.text).toBe(after.text);
    expect(await countCharges(db)).toBe(1);
  });

  it('readiness is a 503 problem naming the database while it is unreachable; liveness stays 200', async () => {
    await proxy.cut();
    const ready = await get(app.baseUrl, '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(ready.json).toMatchObject({ status: 503, checks: { database: { status: 'down' } } });
    expect((await get(app.baseUrl, '/health/live')).status).toBe(200);

    await proxy.restore();
    expect((await get(app.baseUrl, '/health/ready')).status).toBe(200);
  });
});
