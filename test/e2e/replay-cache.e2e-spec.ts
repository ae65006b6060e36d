import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ALICE, BOB } from '../support/clients.js';
import { type HttpResult, nuevoPago, postPago } from '../support/http.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { RoundTripProxy } from '../support/round-trip-proxy.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import type pg from 'pg';

// The API's pool (src/database/data-source-options.ts).
const API_CONNECTIONS = 'pagos';
// Long enough for the previous request's out-of-band work (its webhook fan-out) to be over.
const QUIET_MS = 1_500;

/**
 * Retries answered from the process's memory (ReplayCache), on a real app, a real connection counted on
 * the wire, and real PostgreSQL: the same bytes as the key's row, no round trip, never past the key's
 * expiry, and only for a retry that repeats the request byte for byte.
 */
describe('replays from memory (real app, real PostgreSQL)', () => {
  let app: AppProcess;
  let proxy: RoundTripProxy;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('replay_cache');
    proxy = await RoundTripProxy.inFrontOf(url);
    app = await startAppProcess(proxy.databaseUrl, { PAGOS_RECONCILE_CRON: '0 0 1 1 *', IDEMPOTENCY_PURGE_CRON: '0 0 1 1 *' });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
    await proxy?.close();
  });

  async function roundTripsOf<T>(request: () => Promise<T>): Promise<{ result: T; roundTrips: number }> {
    await delay(QUIET_MS);
    const before = proxy.roundTrips(API_CONNECTIONS);
    const result = await request();
    return { result, roundTrips: proxy.roundTrips(API_CONNECTIONS) - before };
  }

  const sameAnswer = (replay: HttpResult, first: HttpResult) => {
    expect(replay.status).toBe(first.status);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  };

  it('the first retry reads the key (1 round trip); the next ones are answered from memory with the same bytes (0)', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(first.status).toBe(201);

    const read = await roundTripsOf(() => postPago(app.baseUrl, { client: ALICE, key, body }));
    expect(read.roundTrips).toBe(1);
    sameAnswer(read.result, first);
    for (let retry = 0; retry < 3; retry++) {
      const cached = await roundTripsOf(() => postPago(app.baseUrl, { client: ALICE, key, body }));
      expect(cached.roundTrips).toBe(0);
      sameAnswer(cached.result, first);
    }
  });

  it('the same key with another body, or from another client, is not answered from memory', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);
    expect((await postPago(app.baseUrl, { client: ALICE, key, body })).status).toBe(201);

    const reused = await postPago(app.baseUrl, { client: ALICE, key, body: { ...body, monto: body.monto + 1 } });
    expect(reused.status).toBe(422);
    // Keys are per client: Bob's request with Alice's key is Bob's first.
    const bobs = await postPago(app.baseUrl, { client: BOB, key, body });
    expect(bobs.status).toBe(201);
    expect(bobs.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a retry with the same JSON in other bytes (order, spacing) is replayed from the key row, its fingerprint being the same', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(first.status).toBe(201);
    sameAnswer(await postPago(app.baseUrl, { client: ALICE, key, body }), first);

    const reordered = `{ "token": "${body.token}", "moneda": "${body.moneda}", "monto": ${body.monto}, "numeroOrden": "${body.numeroOrden}" }`;
    const read = await roundTripsOf(() => postPago(app.baseUrl, { client: ALICE, key, body, rawBody: reordered }));
    expect(read.roundTrips).toBe(1);
    sameAnswer(read.result, first);
  });

  it('an answer is not kept past its key: once the key expires, the same request starts a new operation', async () => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'tok_decline' });
    const first = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(first.status).toBe(402);
    // The key is left 4 s to live: the retry that reads it may keep its answer for 3 s at most.
    await db.query(`UPDATE idempotency_keys SET expires_at = now() + interval '4 seconds' WHERE key = $1`, [key]);
    sameAnswer(await postPago(app.baseUrl, { client: ALICE, key, body }), first);
    const cached = await roundTripsOf(() => postPago(app.baseUrl, { client: ALICE, key, body }));
    expect(cached.roundTrips).toBe(0);
    sameAnswer(cached.result, first);

    await delay(3_000);
    const again = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(again.status).toBe(402);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.json.pago.id).not.toBe(first.json.pago.id);
  });
});
