import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE, BOB, type TestClient } from '../support/clients.js';
import { nuevoPago, postJson, postPago } from '../support/http.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitFor } from '../support/waiting.js';
import { WebhookConsumer } from '../support/webhook-consumer.js';

// One attempt's bound: every request to the flooding client's consumer hangs this long.
const TIMEOUT_SECONDS = 2;
// Bob's endpoints (the cap) × his events: 6 × 20 = 120 attempts of 2 s each, far more than the workers.
const FLOOD_ENDPOINTS = 20;
const FLOOD_EVENTS = 6;
// Alice's delay is measured by polling: 20 ms keeps its resolution well under the 2 s it is held to.
const POLL_MS = 20;

/**
 * Fair delivery between clients. Real: the service process, PostgreSQL, pg-boss, and two HTTP
 * consumers on loopback: Bob's never answers (each attempt waits the whole timeout), Alice's answers
 * at once. Bob's backlog must not hold Alice's event back longer than one delivery timeout.
 */
describe('webhook delivery is fair between clients: a flooding client cannot take every worker', () => {
  let app: AppProcess;
  let db: pg.Client;
  let slow: WebhookConsumer;
  let fast: WebhookConsumer;

  beforeAll(async () => {
    const url = await createTestDatabase('webhook-fairness');
    // Retries far away: only the first attempts of the backlog compete with Alice's event.
    app = await startAppProcess(url, { WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS), WEBHOOK_RETRY_SCHEDULE: '3600' });
    db = await connect(url);
    slow = await new WebhookConsumer().start();
    slow.otherwise = 'hang';
    fast = await new WebhookConsumer().start();
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
    await slow?.stop();
    await fast?.stop();
  });

  const subscribe = async (client: TestClient, url: string) => {
    const created = await postJson(app.baseUrl, '/webhooks', { client, key: randomUUID(), body: { url, eventos: ['pago.aprobado'] } });
    expect(created.status).toBe(201);
  };

  it(`Alice's event reaches her within one delivery timeout (${TIMEOUT_SECONDS} s) while Bob's ${FLOOD_ENDPOINTS * FLOOD_EVENTS} hanging deliveries wait`, async () => {
    for (let i = 0; i < FLOOD_ENDPOINTS; i++) await subscribe(BOB, `${slow.url}?endpoint=${i}`);
    await subscribe(ALICE, fast.url);
    for (let i = 0; i < FLOOD_EVENTS; i++) expect((await postPago(app.baseUrl, { client: BOB, key: randomUUID(), body: nuevoPago() })).status).toBe(201);
    const backlog = await waitFor('the flood fanned out', async () => {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries`);
      return rows[0]!.n === FLOOD_ENDPOINTS * FLOOD_EVENTS ? rows[0]!.n : undefined;
    }, 60_000, POLL_MS);
    // Bob's consumer is busy hanging: the workers are taken by his attempts.
    await waitFor("Bob's attempts in flight", () => slow.received.length >= 4 || undefined, 60_000, POLL_MS);

    const paid = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() });
    expect(paid.status).toBe(201);
    const paidAt = Date.now();
    await waitFor("Alice's delivery", () => fast.received.length === 1 || undefined, 120_000, POLL_MS);
    const delayMs = Date.now() - paidAt;
    console.log(`fairness: Alice's event delivered ${delayMs} ms after her payment; Bob's backlog ${backlog}, ${slow.received.length} of his attempts begun by then`);
    expect(delayMs).toBeLessThan(TIMEOUT_SECONDS * 1000);
  }, 180_000);
});
