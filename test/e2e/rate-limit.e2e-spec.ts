import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE, BOB } from '../support/clients.js';
import { get, nuevoPago, postPago } from '../support/http.js';
import { countCharges, keyRow } from '../support/ledger.js';
import { connect, createTestDatabase } from '../support/test-database.js';

const LIMIT = 3;
const WINDOW_SECONDS = 60;

/** Per-client rate limit on POST /pagos (@nestjs/throttler), on the built service. */
describe('rate limiting POST /pagos per client', () => {
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('rate_limit');
    app = await startAppProcess(url, { RATE_LIMIT_REQUESTS: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS) });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  it('past the limit a client gets a 429 problem with Retry-After; replays count; nothing is claimed or charged', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);
    for (let replay = 1; replay < LIMIT; replay++) {
      expect((await postPago(app.baseUrl, { client: ALICE, key, body })).headers.get('idempotent-replayed')).toBe('true');
    }
    const charges = await countCharges(db);

    const limitedKey = randomUUID();
    const limited = await postPago(app.baseUrl, { client: ALICE, key: limitedKey, body: nuevoPago() });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(limited.json).toMatchObject({ type: 'https://pagos.dev/problems/rate-limited', status: 429, title: 'Too many requests' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(limited.json.detail).toContain(`${retryAfter} second`);

    expect(await keyRow(db, 'alice', limitedKey)).toBeUndefined();
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(429);
    expect(await countCharges(db)).toBe(charges);
  });

  it('the limit is per client: another client is unaffected', async () => {
    expect((await postPago(app.baseUrl, { client: BOB, key: randomUUID(), body: nuevoPago() })).status).toBe(201);
  });

  it('reads are not limited', async () => {
    expect((await get(app.baseUrl, '/pagos', ALICE)).status).toBe(200);
  });
});
