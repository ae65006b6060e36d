import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import Stripe from 'stripe';
import { type LocalProcessor, startLocalProcessor } from '../../processor/local-processor.js';
import {
  addFault,
  addWebhookFault,
  clearFaults,
  type ProcessorProcess,
  rejectionOf,
  runProcessorToExit,
  startProcessorProcess,
  stripeAt,
  waitUntil,
  WebhookReceiver,
  webhookDeliveries,
} from '../support/local-processor.js';
import { connect, createTestDatabase } from '../support/test-database.js';

const SECRET = 'whsec_local_processor_test_secret';
const verifier = new Stripe('sk_test_unused');

/**
 * Events and their signed webhooks, as Stripe sends them: a real HTTP endpoint on 127.0.0.1 receives
 * them and the official SDK verifies each signature. Retries use 100 ms backoff; every wait is a poll
 * with a deadline.
 */
describe('local processor: events and webhooks', () => {
  let processor: LocalProcessor;
  let receiver: WebhookReceiver;
  let stripe: Stripe;
  let db: pg.Client;
  const logged: string[] = [];

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase('local_processor_webhooks');
    receiver = await WebhookReceiver.start();
    processor = await startLocalProcessor({ databaseUrl, faultInjection: true, webhook: { secret: SECRET, retryBaseMs: 100, retryMaxMs: 400 }, log: (line) => logged.push(line) });
    stripe = stripeAt(processor.url);
    db = await connect(databaseUrl);
  });

  afterEach(async () => clearFaults(processor.url));

  afterAll(async () => {
    await db?.end();
    await processor?.close();
    await receiver?.close();
    expect(logged).toEqual([]);
  });

  const paid = (paymentMethod = 'pm_card_visa', idempotencyKey?: string) =>
    stripe.paymentIntents.create({ amount: 1_000, currency: 'eur', payment_method: paymentMethod, confirm: true }, idempotencyKey ? { idempotencyKey } : {});
  const eventOf = async (objectId: string, type: string): Promise<Stripe.Event> => {
    const { rows } = await db.query(`SELECT body FROM procesador_local.events WHERE type = $1 AND body::jsonb -> 'data' -> 'object' ->> 'id' = $2`, [type, objectId]);
    expect(rows).toHaveLength(1);
    return JSON.parse(rows[0].body);
  };
  const deliveryOf = async (eventId: string) => (await webhookDeliveries(processor.url)).find((delivery) => delivery.event_id === eventId)!;
  const delivered = (eventId: string) => waitUntil(async () => (await deliveryOf(eventId)).delivered_at !== null);

  it('events wait for an endpoint; once it is set, each arrives signed, verified by stripe.webhooks.constructEvent', async () => {
    const key = randomUUID();
    const intent = await paid('pm_card_visa', key);
    const event = await eventOf(intent.id, 'payment_intent.succeeded');
    expect(await deliveryOf(event.id)).toEqual({ event_id: event.id, type: 'payment_intent.succeeded', attempts: 0, delivered_at: null, last_status: null });
    expect(receiver.received).toEqual([]);

    processor.setWebhookUrl(receiver.url);
    await waitUntil(async () => receiver.of(event.id).length === 1);
    const [webhook] = receiver.of(event.id);
    expect(webhook!.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' });
    expect(webhook!.headers['stripe-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const verified = verifier.webhooks.constructEvent(webhook!.body, webhook!.headers['stripe-signature'] as string, SECRET);
    const { lastResponse: _response, ...asRetrieved } = await stripe.paymentIntents.retrieve(intent.id);
    expect(verified).toEqual({
      id: expect.stringMatching(/^evt_[A-Za-z0-9]{24}$/),
      object: 'event',
      api_version: '2026-11-18.endive',
      created: expect.any(Number),
      data: { object: asRetrieved },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: key },
      type: 'payment_intent.succeeded',
    });
    expect(() => verifier.webhooks.constructEvent(webhook!.body, webhook!.headers['stripe-signature'] as string, 'whsec_other')).toThrow(Stripe.errors.StripeSignatureVerificationError);
    await delivered(event.id);
    expect(await deliveryOf(event.id)).toMatchObject({ attempts: 1, last_status: 200 });
  });

  it('each state change writes its event in its own transaction: none for a refused request or a fault before the work, one after it', async () => {
    const declined = await stripe.paymentIntents.create({ amount: 700, currency: 'eur' });
    await rejectionOf(stripe.paymentIntents.confirm(declined.id, { payment_method: 'pm_card_chargeDeclined' }));
    const failed = await eventOf(declined.id, 'payment_intent.payment_failed');
    expect(failed.data.object).toMatchObject({ status: 'requires_payment_method', last_payment_error: { code: 'card_declined' } });
    await rejectionOf(stripe.paymentIntents.confirm(declined.id, { payment_method: 'card_unknown' }));
    await addFault(processor.url, { operation: 'cancel_intent', fault: 'error_before' });
    await rejectionOf(stripe.paymentIntents.cancel(declined.id));
    const countFor = async (id: string) => (await db.query(`SELECT count(*)::int AS n FROM procesador_local.events WHERE body::jsonb -> 'data' -> 'object' ->> 'id' = $1`, [id])).rows[0].n;
    expect(await countFor(declined.id)).toBe(1);
    await addFault(processor.url, { operation: 'cancel_intent', fault: 'error_after' });
    await rejectionOf(stripe.paymentIntents.cancel(declined.id));
    expect((await eventOf(declined.id, 'payment_intent.canceled')).data.object).toMatchObject({ status: 'canceled' });

    const intent = await paid();
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 100 });
    expect((await eventOf(refund.id, 'refund.created')).data.object).toMatchObject({ id: refund.id, status: 'succeeded', failure_reason: null });
  });

  it('GET /v1/events/:id and GET /v1/events (newest first, by type) through the SDK', async () => {
    const intent = await paid();
    const event = await eventOf(intent.id, 'payment_intent.succeeded');
    const { lastResponse: _response, ...retrieved } = await stripe.events.retrieve(event.id);
    expect(retrieved).toEqual(event);
    const newest = await stripe.events.list({ limit: 1 });
    expect(newest).toMatchObject({ object: 'list', url: '/v1/events', has_more: true });
    expect(newest.data[0]!.id).toBe(event.id);
    const canceled: Stripe.Event[] = [];
    for await (const listed of stripe.events.list({ type: 'payment_intent.canceled', limit: 1 })) canceled.push(listed);
    expect(canceled.length).toBeGreaterThan(0);
    expect(canceled.every((listed) => listed.type === 'payment_intent.canceled')).toBe(true);
    expect(await rejectionOf(stripe.events.retrieve('evt_unknown'))).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });

  it('a 500 from the endpoint is retried after a backoff until a 2xx', async () => {
    const intent = await stripe.paymentIntents.create({ amount: 1_000, currency: 'eur' });
    receiver.answerNextAbout(intent.id, 500, 503);
    await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });
    const event = await eventOf(intent.id, 'payment_intent.succeeded');
    await delivered(event.id);
    expect(await deliveryOf(event.id)).toMatchObject({ attempts: 3, last_status: 200 });
    expect(receiver.of(event.id).map((webhook) => webhook.body)).toEqual(Array(3).fill(receiver.of(event.id)[0]!.body));
  });

  it('an unreachable endpoint is retried once it answers again', async () => {
    const unreachable = await WebhookReceiver.start();
    const unreachableUrl = unreachable.url;
    await unreachable.close();
    processor.setWebhookUrl(unreachableUrl);
    const intent = await paid();
    const event = await eventOf(intent.id, 'payment_intent.succeeded');
    await waitUntil(async () => (await deliveryOf(event.id)).attempts >= 2);
    expect(await deliveryOf(event.id)).toMatchObject({ delivered_at: null, last_status: null });
    processor.setWebhookUrl(receiver.url);
    await delivered(event.id);
    expect(receiver.of(event.id)).toHaveLength(1);
  });

  describe('injected webhook faults', () => {
    it('drop: the event counts as delivered and is never sent', async () => {
      await addWebhookFault(processor.url, { fault: 'drop', type: 'payment_intent.requires_action' });
      const intent = await paid('pm_card_authenticationRequired');
      const event = await eventOf(intent.id, 'payment_intent.requires_action');
      await delivered(event.id);
      const after = await paid();
      await delivered((await eventOf(after.id, 'payment_intent.succeeded')).id);
      expect(receiver.of(event.id)).toEqual([]);
      expect(await deliveryOf(event.id)).toMatchObject({ attempts: 0, last_status: null });
    });

    it('duplicate: two POSTs of the same body, each signed', async () => {
      await addWebhookFault(processor.url, { fault: 'duplicate', type: 'payment_intent.succeeded' });
      const event = await eventOf((await paid()).id, 'payment_intent.succeeded');
      await delivered(event.id);
      const copies = receiver.of(event.id);
      expect(copies).toHaveLength(2);
      expect(copies[1]!.body).toBe(copies[0]!.body);
      for (const copy of copies) expect(verifier.webhooks.constructEvent(copy.body, copy.headers['stripe-signature'] as string, SECRET).id).toBe(event.id);
      expect(await deliveryOf(event.id)).toMatchObject({ attempts: 2, last_status: 200 });
    });

    it('reorder: the event is sent only after the one after it', async () => {
      await addWebhookFault(processor.url, { fault: 'reorder', type: 'payment_intent.requires_action' });
      const held = await eventOf((await paid('pm_card_authenticationRequired')).id, 'payment_intent.requires_action');
      const next = await eventOf((await paid()).id, 'payment_intent.succeeded');
      await delivered(held.id);
      const order = receiver.received.map((webhook) => webhook.eventId).filter((id) => id === held.id || id === next.id);
      expect(order).toEqual([next.id, held.id]);
    });

    it('delay: the event is sent after delayMs while later events go on', async () => {
      await addWebhookFault(processor.url, { fault: 'delay', type: 'payment_intent.requires_action', delayMs: 700 });
      const delayed = await eventOf((await paid('pm_card_authenticationRequired')).id, 'payment_intent.requires_action');
      const next = await eventOf((await paid()).id, 'payment_intent.succeeded');
      await delivered(next.id);
      expect(receiver.of(delayed.id)).toEqual([]);
      await delivered(delayed.id);
      const order = receiver.received.map((webhook) => webhook.eventId).filter((id) => id === delayed.id || id === next.id);
      expect(order).toEqual([next.id, delayed.id]);
    });

    it('GET /_faults/webhooks lists what is pending; DELETE /_faults clears them; bad faults are 400s', async () => {
      await addWebhookFault(processor.url, { fault: 'drop', type: 'refund.failed', times: 2 });
      expect(await (await fetch(`${processor.url}/_faults/webhooks`)).json()).toEqual({
        pending: [
          { fault: 'drop', type: 'refund.failed', delayMs: 0 },
          { fault: 'drop', type: 'refund.failed', delayMs: 0 },
        ],
      });
      await clearFaults(processor.url);
      expect(await (await fetch(`${processor.url}/_faults/webhooks`)).json()).toEqual({ pending: [] });
      const bad = await fetch(`${processor.url}/_faults/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault: 'lose' }) });
      expect(bad.status).toBe(400);
    });
  });
});

/**
 * Two instances on one database, one in this process and one the built standalone process (env
 * configured, endpoint set through the fault API): each event is delivered once, and a restarted
 * processor delivers what was pending.
 */
describe('local processor: webhooks from two instances on one database', () => {
  let databaseUrl: string;
  let receiver: WebhookReceiver;
  let inProcess: LocalProcessor;
  let standalone: ProcessorProcess;
  const logged: string[] = [];

  beforeAll(async () => {
    databaseUrl = await createTestDatabase('local_processor_webhook_instances');
    // A slow endpoint keeps both instances delivering at the same time.
    receiver = await WebhookReceiver.start(20);
  });

  afterAll(async () => {
    await inProcess?.close();
    await standalone?.stop();
    await receiver?.close();
    expect(logged).toEqual([]);
  });

  it('events written while no processor delivers are delivered by the next one started', async () => {
    const first = await startLocalProcessor({ databaseUrl, log: (line) => logged.push(line) });
    const intent = await stripeAt(first.url).paymentIntents.create({ amount: 900, currency: 'eur', payment_method: 'pm_card_visa', confirm: true });
    await first.close();
    inProcess = await startLocalProcessor({ databaseUrl, webhook: { url: receiver.url, secret: SECRET, retryBaseMs: 100 }, log: (line) => logged.push(line) });
    await waitUntil(async () => receiver.received.some((webhook) => webhook.type === 'payment_intent.succeeded' && webhook.body.includes(intent.id)));
  });

  it('each of 40 events is POSTed exactly once, whichever instance claims it', async () => {
    standalone = await startProcessorProcess(databaseUrl, { PROCESSOR_FAULTS: 'true', STRIPE_WEBHOOK_SECRET: SECRET, PROCESSOR_WEBHOOK_RETRY_BASE_MS: '100' });
    const setEndpoint = await fetch(`${standalone.url}/_faults/webhook-endpoint`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, secret: SECRET }),
    });
    expect(setEndpoint.status).toBe(200);
    const clients = [stripeAt(inProcess.url), stripeAt(standalone.url)];
    await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        clients[index % 2]!.paymentIntents.create({ amount: 500 + index, currency: 'eur', payment_method: 'pm_card_visa', confirm: true }),
      ),
    );
    const db = await connect(databaseUrl);
    try {
      await waitUntil(async () => (await db.query('SELECT count(*)::int AS n FROM procesador_local.events WHERE delivered_at IS NULL')).rows[0].n === 0, 20_000);
      const { rows } = await db.query('SELECT id FROM procesador_local.events');
      const counts = rows.map((row) => receiver.of(row.id).length);
      expect(counts).toEqual(Array(rows.length).fill(1));
      expect(rows.length).toBe(41);
      const deliverers = await db.query('SELECT count(DISTINCT leased_by)::int AS n FROM procesador_local.events WHERE seq > 1');
      expect(deliverers.rows[0].n).toBe(2);
    } finally {
      await db.end();
    }
  });

  it('the standalone process refuses a webhook URL without a whsec_ secret, in one line, exit 1', async () => {
    const noSecret = await runProcessorToExit({ DATABASE_URL: databaseUrl, STRIPE_WEBHOOK_URL: receiver.url });
    expect(noSecret).toMatchObject({ code: 1, stdout: '' });
    expect(noSecret.stderr.trim().split('\n')).toEqual([expect.stringContaining('STRIPE_WEBHOOK_SECRET is required with STRIPE_WEBHOOK_URL')]);
    const apiKey = await runProcessorToExit({ DATABASE_URL: databaseUrl, STRIPE_WEBHOOK_URL: receiver.url, STRIPE_WEBHOOK_SECRET: 'sk_test_oops' });
    expect(apiKey.stderr).toContain('STRIPE_WEBHOOK_SECRET must start with whsec_');
  });
});
