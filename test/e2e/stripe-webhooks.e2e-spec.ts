import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { authenticateAtProcessor, intentOf } from '../support/autenticacion.js';
import { ALICE } from '../support/clients.js';
import { get, nuevoPago, postPago } from '../support/http.js';
import { startProcessorProcess, type ProcessorProcess } from '../support/processor-process.js';
import { eventosDePago } from '../support/stale-payments.js';
import { deliverStripeEvent, newWebhookSecret, stripeEvent, stripeSignature } from '../support/stripe-events.js';
import { RECONCILE_NEVER } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

/**
 * `POST /stripe/webhooks` as Stripe calls it: signed events, some forged, stale, repeated, concurrent,
 * out of order, about objects that aren't ours. The processor is a process of its own that sends no
 * webhook here (none is configured), so every delivery is the test's; the reconciler never runs, so
 * every change is the webhook's. Real: both processes, HTTP, PostgreSQL.
 */
describe('the processor\'s webhooks taken in once each (real app, real processor, real PostgreSQL)', () => {
  const secret = newWebhookSecret();
  let db: pg.Client;
  let processor: ProcessorProcess;
  let app: AppProcess;

  beforeAll(async () => {
    const url = await createTestDatabase('stripe_webhooks');
    processor = await startProcessorProcess(url);
    app = await startAppProcess(url, { ...processor.serviceEnv, STRIPE_WEBHOOK_SECRET: secret, STRIPE_MAX_NETWORK_RETRIES: '0', PAGOS_RECONCILE_CRON: RECONCILE_NEVER, IDEMPOTENCY_PURGE_CRON: '* * * * * *' });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
    await processor?.stop();
  });

  /** A payment waiting for its customer, who has authenticated at the processor: only an event can tell the service. */
  const authenticated = async (outcome: 'success' | 'failure' = 'success'): Promise<{ pagoId: string; intent: string }> => {
    const accepted = await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago({ token: 'pm_card_authenticationRequired' }) });
    expect(accepted.status).toBe(202);
    const intent = await intentOf(db, accepted.json.id);
    await authenticateAtProcessor(processor.url, intent, outcome);
    return { pagoId: accepted.json.id, intent };
  };
  const estadoOf = async (pagoId: string): Promise<string> => (await get(app.baseUrl, `/pagos/${pagoId}`, ALICE)).json.estado;
  const recorded = async (eventId: string): Promise<number> => (await db.query('SELECT count(*)::int AS n FROM eventos_procesador WHERE id = $1', [eventId])).rows[0].n;
  const intentEvent = (type: string, intent: string, status: string): Record<string, unknown> =>
    stripeEvent(type, { id: intent, object: 'payment_intent', status });

  it('a forged signature, a stale timestamp, no signature and a body that is not an event: 400, nothing changed, neither secret nor body logged', async () => {
    const { pagoId, intent } = await authenticated();
    const event = intentEvent('payment_intent.succeeded', intent, 'succeeded');
    const body = JSON.stringify({ ...event, marker: 'body-marker-never-logged' });
    const now = Math.floor(Date.now() / 1000);
    const refusals = [
      await deliverStripeEvent(app.baseUrl, secret, body, { signature: stripeSignature(newWebhookSecret(), body) }),
      await deliverStripeEvent(app.baseUrl, secret, body, { signature: stripeSignature(secret, body, now - 301) }),
      await deliverStripeEvent(app.baseUrl, secret, body, { signature: null }),
      await deliverStripeEvent(app.baseUrl, secret, JSON.stringify({ id: 'evt_x', hello: 'not an event' })),
      // Signed, then altered on the way.
      await deliverStripeEvent(app.baseUrl, secret, body.replace('succeeded', 'succeedeD'), { signature: stripeSignature(secret, body) }),
    ];
    for (const refusal of refusals) {
      expect(refusal.status).toBe(400);
      expect(refusal.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(refusal.json.type).toMatch(/evento-procesador-invalido$/);
    }
    expect(await recorded(event.id as string)).toBe(0);
    expect(await estadoOf(pagoId)).toBe('REQUIERE_AUTENTICACION');
    expect(app.output()).not.toContain(secret);
    expect(app.output()).not.toContain('body-marker-never-logged');
    expect(app.output()).toContain('processor event rejected');
  });

  it('a signed event settles the payment from the intent as it is now; its redelivery answers 200 and changes nothing', async () => {
    const { pagoId, intent } = await authenticated();
    // The event's copy of the intent says it failed; the processor says it succeeded: the processor wins.
    const body = JSON.stringify(intentEvent('payment_intent.payment_failed', intent, 'requires_payment_method'));
    const first = await deliverStripeEvent(app.baseUrl, secret, body);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ received: true, outcome: 'applied' });
    expect(await estadoOf(pagoId)).toBe('APROBADO');
    const again = await deliverStripeEvent(app.baseUrl, secret, body);
    expect(again.json).toEqual({ received: true, outcome: 'duplicate' });
    // An older event arriving last can't undo it.
    const older = await deliverStripeEvent(app.baseUrl, secret, JSON.stringify(intentEvent('payment_intent.requires_action', intent, 'requires_action')));
    expect(older.json).toEqual({ received: true, outcome: 'applied' });
    expect(await estadoOf(pagoId)).toBe('APROBADO');
    expect((await eventosDePago(db, pagoId)).map((evento) => evento.type)).toEqual(['pago.requiere_autenticacion', 'pago.aprobado']);
  });

  it('the same event delivered 12 times at once is applied once: one settlement, one pago.rechazado', async () => {
    const { pagoId, intent } = await authenticated('failure');
    const body = JSON.stringify(intentEvent('payment_intent.payment_failed', intent, 'requires_payment_method'));
    const answers = await Promise.all(Array.from({ length: 12 }, () => deliverStripeEvent(app.baseUrl, secret, body)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    expect(answers.filter((answer) => answer.json.outcome === 'applied')).toHaveLength(1);
    expect(answers.filter((answer) => answer.json.outcome === 'duplicate')).toHaveLength(11);
    expect((await get(app.baseUrl, `/pagos/${pagoId}`, ALICE)).json).toMatchObject({ estado: 'RECHAZADO', motivo: 'autenticacion' });
    expect((await eventosDePago(db, pagoId)).map((evento) => evento.type)).toEqual(['pago.requiere_autenticacion', 'pago.rechazado']);
  });

  it('different events about one payment racing each other decide it once', async () => {
    const { pagoId, intent } = await authenticated();
    const types = ['payment_intent.succeeded', 'payment_intent.processing', 'payment_intent.requires_action', 'payment_intent.succeeded'];
    const answers = await Promise.all(types.map((type) => deliverStripeEvent(app.baseUrl, secret, JSON.stringify(intentEvent(type, intent, 'succeeded')))));
    expect(answers.map((answer) => answer.json.outcome)).toEqual(Array(4).fill('applied'));
    expect(await estadoOf(pagoId)).toBe('APROBADO');
    expect((await eventosDePago(db, pagoId)).filter((evento) => evento.type === 'pago.aprobado')).toHaveLength(1);
  });

  it('an event about an intent that is not ours, or of a type nobody takes, is acknowledged and not recorded', async () => {
    const stranger = stripeEvent('payment_intent.succeeded', { id: 'pi_not_ours_123', object: 'payment_intent', status: 'succeeded' });
    expect((await deliverStripeEvent(app.baseUrl, secret, JSON.stringify(stranger))).json).toEqual({ received: true, outcome: 'ignored' });
    const other = stripeEvent('customer.created', { id: 'cus_123', object: 'customer' });
    expect((await deliverStripeEvent(app.baseUrl, secret, JSON.stringify(other))).json).toEqual({ received: true, outcome: 'ignored' });
    expect(await recorded(stranger.id as string)).toBe(0);
    expect(await recorded(other.id as string)).toBe(0);
  });

  it('while the processor cannot be asked the event is postponed (503, nothing recorded); its redelivery then applies it', async () => {
    const { pagoId, intent } = await authenticated();
    const body = JSON.stringify(intentEvent('payment_intent.succeeded', intent, 'succeeded'));
    await processor.refuse(3_000);
    const postponed = await deliverStripeEvent(app.baseUrl, secret, body);
    expect(postponed.status).toBe(503);
    expect(postponed.json.type).toMatch(/evento-procesador-aplazado$/);
    expect(postponed.headers.get('retry-after')).toBe('30');
    expect(await recorded(JSON.parse(body).id)).toBe(0);
    expect(await estadoOf(pagoId)).toBe('REQUIERE_AUTENTICACION');
    await waitUntil(async () => (await fetch(`${processor.url}/_faults`).catch(() => undefined))?.ok === true);
    expect((await deliverStripeEvent(app.baseUrl, secret, body)).json).toEqual({ received: true, outcome: 'applied' });
    expect(await estadoOf(pagoId)).toBe('APROBADO');
  });

  it('applied event ids are forgotten after 30 days (Stripe resends for at most that long), and not before', async () => {
    const [old, recent] = [`evt_old_${randomUUID().slice(0, 8)}`, `evt_recent_${randomUUID().slice(0, 8)}`];
    await db.query(`INSERT INTO eventos_procesador (id, tipo, recibido_en) VALUES ($1, 'payment_intent.succeeded', now() - interval '31 days'), ($2, 'payment_intent.succeeded', now() - interval '29 days')`, [old, recent]);
    await waitUntil(async () => (await recorded(old)) === 0, 4_000);
    expect(await recorded(recent)).toBe(1);
  });
});
