import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE, TEST_API_TOKENS } from '../support/clients.js';
import { get, nuevoPago, postJson, postPago } from '../support/http.js';
import { sampleOf, scrape } from '../support/metrics.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitFor } from '../support/waiting.js';
import { WebhookConsumer } from '../support/webhook-consumer.js';

const OPS = path.resolve('dist/src/ops/main.js');
// Fast retries and timeouts so that nothing is slept out for long; loopback consumers need insecure URLs.
const FAST = { WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1', WEBHOOK_TIMEOUT_SECONDS: '1' };

/**
 * Webhook delivery end to end. Real: service processes on loopback ports, PostgreSQL, pg-boss, and
 * a real HTTP consumer on loopback that verifies signatures with the standardwebhooks library.
 */
describe('webhook delivery: at least once, signed, retried, to a real consumer', () => {
  let url: string;
  let db: pg.Client;
  let app: AppProcess;
  const extra: AppProcess[] = [];
  let consumer: WebhookConsumer;
  let endpoint: { id: string; secreto: string };

  beforeAll(async () => {
    url = await createTestDatabase('webhook-delivery');
    app = await startAppProcess(url, FAST);
    db = await connect(url);
  });

  beforeEachConsumer();

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  function beforeEachConsumer(): void {
    afterEach(async () => {
      await Promise.all(extra.splice(0).map((process) => process.stop('SIGKILL')));
      await consumer?.stop();
      if (endpoint) await fetch(`${app.baseUrl}/webhooks/${endpoint.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ALICE.token}` } });
    });
  }

  async function subscribe(): Promise<void> {
    consumer = await new WebhookConsumer().start();
    const created = await postJson(app.baseUrl, '/webhooks', { client: ALICE, key: randomUUID(), body: { url: consumer.url, eventos: ['pago.aprobado', 'pago.rechazado'] } });
    expect(created.status).toBe(201);
    endpoint = created.json;
  }

  const pay = async (on = app, body = nuevoPago()) => {
    const paid = await postPago(on.baseUrl, { client: ALICE, key: randomUUID(), body });
    return paid.status === 402 ? paid.json.pago : paid.json;
  };
  const eventOf = async (pagoId: string): Promise<{ id: string; type: string }> =>
    waitFor('the event', async () => (await db.query(`SELECT payload::json AS p FROM eventos WHERE payload->'data'->>'id' = $1`, [pagoId])).rows[0]?.p);
  const ops = async (...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> => {
    const child = spawn(process.execPath, [OPS, ...args], { env: { PATH: process.env.PATH, DATABASE_URL: url, API_TOKENS: TEST_API_TOKENS }, stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, stdout, stderr };
  };
  const delivery = async (eventId: string) => (await db.query(`SELECT * FROM webhook_deliveries WHERE event_id = $1`, [eventId])).rows[0];

  it('delivers each event signed per Standard Webhooks: webhook-id is the event id and the body is the event as GET /eventos/{id} shows it', async () => {
    await subscribe();
    const pago = await pay();
    const declined = await pay(app, nuevoPago({ token: 'tok_decline' }));
    const [approved, rejected] = [await eventOf(pago.id), await eventOf(declined.id)];
    await waitFor('both deliveries', () => consumer.acknowledgedIds().length >= 2 || undefined);
    for (const event of [approved, rejected]) {
      const [received] = consumer.received.filter((entry) => entry.id === event.id);
      expect(WebhookConsumer.verify(endpoint.secreto, received!)).toEqual((await get(app.baseUrl, `/eventos/${event.id}`, ALICE)).json);
      expect(received!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(() => WebhookConsumer.verify('whsec_' + Buffer.from('not the secret 0123456789').toString('base64'), received!)).toThrow();
    }
    expect(consumer.received.map((entry) => entry.id).sort()).toEqual([approved.id, rejected.id].sort());
    await waitFor('the acknowledgement recorded', async () => (await delivery(approved.id))?.delivered_at ?? undefined);
    await waitFor('both acknowledgements recorded', async () => (await delivery(rejected.id))?.delivered_at ?? undefined);
    const metrics = await scrape(app.baseUrl);
    expect(sampleOf(metrics, 'pagos_webhook_deliveries_total', { result: 'delivered' })).toBeGreaterThanOrEqual(2);
    expect(sampleOf(metrics, 'pagos_webhook_event_to_delivery_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(sampleOf(metrics, 'pagos_webhook_oldest_undelivered_event_age_seconds')).toBe(0);
  });

  it('a consumer answering 500 then 200 gets the same webhook-id again on the schedule, acknowledged once', async () => {
    await subscribe();
    consumer.next.push(500);
    const event = await eventOf((await pay()).id);
    await waitFor('the retry', () => consumer.acknowledgedIds().includes(event.id) || undefined);
    expect(consumer.received.map((entry) => [entry.id, entry.status])).toEqual([[event.id, 500], [event.id, 200]]);
    await waitFor('recorded', async () => (await delivery(event.id))?.delivered_at ?? undefined);
    expect(await delivery(event.id)).toMatchObject({ attempts: 2, last_status: 200 });
  });

  it('a consumer hanging past WEBHOOK_TIMEOUT_SECONDS is a failed attempt; the next one delivers the same webhook-id', async () => {
    await subscribe();
    consumer.next.push('hang');
    const event = await eventOf((await pay()).id);
    await waitFor('the retry', () => consumer.acknowledgedIds().includes(event.id) || undefined);
    expect(consumer.received.map((entry) => entry.id)).toEqual([event.id, event.id]);
  });

  it('a consumer down for a while gets the event once it is back, same webhook-id', async () => {
    await subscribe();
    await consumer.stop();
    const event = await eventOf((await pay()).id);
    await waitFor('a failed attempt', async () => ((await delivery(event.id))?.attempts >= 1 ? true : undefined));
    expect((await delivery(event.id)).last_error).toMatch(/ECONNREFUSED/);
    await consumer.start();
    await waitFor('the delivery', () => consumer.acknowledgedIds().includes(event.id) || undefined);
    expect(consumer.received.map((entry) => entry.id)).toEqual([event.id]);
  });

  it('an endpoint failing the whole schedule is disabled (GET /webhooks/{id} says so) and its event is kept', async () => {
    await subscribe();
    consumer.otherwise = 500;
    const event = await eventOf((await pay()).id);
    // The first attempt and the three retries of WEBHOOK_RETRY_SCHEDULE=1,1,1.
    const shown = await waitFor('disabled', async () => {
      const current = (await get(app.baseUrl, `/webhooks/${endpoint.id}`, ALICE)).json;
      return current.estado === 'DESHABILITADO' ? current : undefined;
    });
    expect(shown.deshabilitadoEn).toEqual(expect.any(String));
    expect(consumer.received.map((entry) => entry.id)).toEqual([event.id, event.id, event.id, event.id]);
    expect((await get(app.baseUrl, `/eventos/${event.id}`, ALICE)).status).toBe(200);
    // Disabled: later events are not sent to it.
    await eventOf((await pay()).id);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(consumer.received).toHaveLength(4);
  });

  it('npm run ops -- webhooks failing lists a disabled endpoint\'s delivery with its last error; enable sends it; redeliver sends it again, same webhook-id', async () => {
    await subscribe();
    consumer.otherwise = 500;
    const event = await eventOf((await pay()).id);
    await waitFor('disabled', async () => ((await get(app.baseUrl, `/webhooks/${endpoint.id}`, ALICE)).json.estado === 'DESHABILITADO' ? true : undefined));
    const failing = await ops('webhooks', 'failing');
    expect(failing.code).toBe(0);
    expect(failing.stdout).toContain(event.id);
    expect(failing.stdout).toMatch(/endpoint DISABLED\s+last error: HTTP 500/);

    consumer.otherwise = 200;
    const enabled = await ops('webhooks', 'enable', '--id', endpoint.id);
    expect(enabled.stdout).toContain('1 undelivered event(s) enqueued');
    await waitFor('the delivery', () => consumer.acknowledgedIds().includes(event.id) || undefined);
    expect((await get(app.baseUrl, `/webhooks/${endpoint.id}`, ALICE)).json.estado).toBe('ACTIVO');
    await waitFor('recorded', async () => (await delivery(event.id))?.delivered_at ?? undefined);
    expect((await ops('webhooks', 'failing')).stdout).not.toContain(event.id);

    expect((await ops('webhooks', 'redeliver', '--event', event.id)).code).toBe(0);
    await waitFor('the redelivery', () => (consumer.acknowledgedIds().filter((id) => id === event.id).length === 2 ? true : undefined));
    const unknown = await ops('webhooks', 'redeliver', '--event', `evt_${'0'.repeat(32)}`);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no event');
  });

  it('two replicas deliver every event, each acknowledged once (the consumer always answers 200)', async () => {
    await subscribe();
    extra.push(await startAppProcess(url, { ...FAST, DB_MIGRATIONS_RUN: 'false' }));
    const pagos = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(i % 2 === 0 ? app : extra[0]!)));
    const ids = await Promise.all(pagos.map(async (pago) => (await eventOf(pago.id)).id));
    await waitFor('every delivery', () => (new Set(consumer.acknowledgedIds()).size >= ids.length ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const counts = new Map<string, number>();
    for (const id of consumer.received.map((entry) => entry.id)) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
  });
});

describe('webhook delivery survives a SIGKILL', () => {
  it('a process killed mid-delivery (after the payment committed): the event is delivered after the restart, same webhook-id', async () => {
    const url = await createTestDatabase('webhook-delivery-kill');
    const consumer = await new WebhookConsumer().start();
    let victim: AppProcess | undefined = await startAppProcess(url, FAST);
    let restarted: AppProcess | undefined;
    try {
      const created = await postJson(victim.baseUrl, '/webhooks', { client: ALICE, key: randomUUID(), body: { url: consumer.url, eventos: ['pago.aprobado'] } });
      consumer.next.push('hang');
      const paid = await postPago(victim.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() });
      expect(paid.status).toBe(201);
      await waitFor('the attempt', () => consumer.received.length >= 1 || undefined);
      await victim.stop('SIGKILL');
      victim = undefined;
      restarted = await startAppProcess(url, { ...FAST, DB_MIGRATIONS_RUN: 'false' });
      await waitFor('the redelivery', () => consumer.acknowledgedIds().length >= 1 || undefined, 90_000);
      const [first, second] = consumer.received;
      expect(second!.id).toBe(first!.id);
      expect(WebhookConsumer.verify(created.json.secreto, second!)).toMatchObject({ type: 'pago.aprobado', data: paid.json });
    } finally {
      await victim?.stop('SIGKILL');
      await restarted?.stop();
      await consumer.stop();
    }
  }, 120_000);
});
