import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { authenticateAtProcessor, intentOf, intentStatusOf, processorEventsOf, settleAtProcessor } from '../support/autenticacion.js';
import { ALICE } from '../support/clients.js';
import { type HttpResult, nuevoPago, postPago } from '../support/http.js';
import { countChargesOfOrder } from '../support/ledger.js';
import { startProcessorProcess, type ProcessorProcess } from '../support/processor-process.js';
import { backdateAuthentication, eventosDePago } from '../support/stale-payments.js';
import { newWebhookSecret } from '../support/stripe-events.js';
import { RECONCILE_EVERY_SECOND } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { eventually } from '../support/waiting.js';

const SLOW_TEST_MS = 120_000;

/**
 * The processor's news arrives however it arrives — once, twice, out of order, late, never, or to a
 * service that dies while taking it in — and every payment is settled once. The processor is a
 * process of its own sending real signed webhooks (retried every 100 ms+ on failure) to the service,
 * with webhook faults injected; the reconciler runs every second. Real: processes, HTTP, PostgreSQL.
 */
describe('3-D Secure outcomes through webhooks that are duplicated, reordered, late, lost or cut', () => {
  const secret = newWebhookSecret();
  let url: string;
  let db: pg.Client;
  let processor: ProcessorProcess;
  let service: AppProcess;
  const services: AppProcess[] = [];

  const startService = async (): Promise<AppProcess> => {
    const started = await startAppProcess(url, {
      ...processor.serviceEnv, STRIPE_WEBHOOK_SECRET: secret, STRIPE_MAX_NETWORK_RETRIES: '0', PAGOS_RECONCILE_CRON: RECONCILE_EVERY_SECOND,
    });
    services.push(started);
    await processor.pointWebhooksAt(`${started.baseUrl}/stripe/webhooks`, secret);
    return started;
  };

  beforeAll(async () => {
    url = await createTestDatabase('autenticacion_webhooks');
    processor = await startProcessorProcess(url, { PROCESSOR_WEBHOOK_RETRY_BASE_MS: '100', PROCESSOR_WEBHOOK_RETRY_MAX_MS: '500' });
    db = await connect(url);
    service = await startService();
  });

  afterEach(async () => {
    await processor.clearFaults();
    // A test that started (and killed) a service of its own leaves the webhooks pointed back at the file's.
    await processor.pointWebhooksAt(`${service.baseUrl}/stripe/webhooks`, secret);
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all(services.map((started) => started.stop('SIGKILL')));
    await processor?.stop('SIGKILL');
  });

  const pay = (body = nuevoPago({ token: 'pm_card_authenticationRequired' }), key = randomUUID()): Promise<HttpResult> =>
    postPago(service.baseUrl, { client: ALICE, key, body });
  const estadoOf = async (pagoId: string): Promise<{ estado: string; motivo: string | null }> =>
    (await db.query('SELECT estado, motivo FROM pagos WHERE id = $1', [pagoId])).rows[0];
  const decided = (pagoId: string, estado: string) => eventually(`payment ${pagoId} ${estado}`, async () => (await estadoOf(pagoId)).estado === estado);
  const eventTypes = async (pagoId: string): Promise<string[]> => (await eventosDePago(db, pagoId)).map((evento) => evento.type);
  const waitingPayment = async (): Promise<{ pagoId: string; intent: string; numeroOrden: string }> => {
    const body = nuevoPago({ token: 'pm_card_authenticationRequired' });
    const accepted = await pay(body);
    expect(accepted.status).toBe(202);
    return { pagoId: accepted.json.id, intent: await intentOf(db, accepted.json.id), numeroOrden: body.numeroOrden };
  };

  it('the webhook settles the payment while the route still asks about it: the route\'s settlement is superseded, it runs again and answers the same APROBADO, one event, one charge', async () => {
    // The confirmation charges but answers 500; the route then asks about the intent, slowly, and the webhook gets there first.
    await processor.inject({ operation: 'confirm_intent', fault: 'error_after' });
    await processor.inject({ operation: 'retrieve_intent', fault: 'latency', latencyMs: 2_000 });
    const body = nuevoPago({ token: 'tok_visa' });
    const key = randomUUID();
    const answer = await pay(body, key);
    expect(answer.status).toBe(201);
    expect(answer.json.estado).toBe('APROBADO');
    expect(service.output()).toContain(`key ${key}: the handler's last write was superseded`);
    expect(await eventTypes(answer.json.id)).toEqual(['pago.aprobado']);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
    expect((await pay(body, key)).text).toBe(answer.text);
  });

  it('a webhook delivered twice settles the payment once: one APROBADO, one pago.aprobado, one charge', async () => {
    await processor.injectWebhook({ fault: 'duplicate', type: 'payment_intent.succeeded' });
    const { pagoId, intent, numeroOrden } = await waitingPayment();
    await authenticateAtProcessor(processor.url, intent, 'success');
    await decided(pagoId, 'APROBADO');
    await eventually('both copies delivered', async () => (await processorEventsOf(db, 'payment_intent.succeeded', intent)).some((delivery) => delivery.delivered_at !== null));
    expect(await eventTypes(pagoId)).toEqual(['pago.requiere_autenticacion', 'pago.aprobado']);
    expect(await countChargesOfOrder(db, numeroOrden)).toBe(1);
  });

  it('the older event arriving last (requires_action behind succeeded) can\'t undo the approval', async () => {
    await processor.injectWebhook({ fault: 'reorder', type: 'payment_intent.requires_action' });
    const { pagoId, intent } = await waitingPayment();
    await authenticateAtProcessor(processor.url, intent, 'success');
    await decided(pagoId, 'APROBADO');
    await eventually('the held-back event delivered after', async () =>
      (await processorEventsOf(db, 'payment_intent.requires_action', intent)).every((delivery) => delivery.delivered_at !== null));
    expect((await estadoOf(pagoId)).estado).toBe('APROBADO');
    expect(await eventTypes(pagoId)).toEqual(['pago.requiere_autenticacion', 'pago.aprobado']);
  });

  it('a webhook that never comes: the reconciler settles the payment instead; late, the webhook changes nothing', async () => {
    await processor.injectWebhook({ fault: 'delay', type: 'payment_intent.succeeded', delayMs: 4_000 });
    const { pagoId, intent } = await waitingPayment();
    await authenticateAtProcessor(processor.url, intent, 'success');
    // Untouched for an hour as far as the reconciler can tell: its next pass asks the processor.
    await db.query(`UPDATE pagos SET actualizado_en = now() - interval '1 hour' WHERE id = $1`, [pagoId]);
    await decided(pagoId, 'APROBADO');
    await eventually('the late webhook delivered', async () => (await processorEventsOf(db, 'payment_intent.succeeded', intent)).some((delivery) => delivery.delivered_at !== null));
    expect(await eventTypes(pagoId)).toEqual(['pago.requiere_autenticacion', 'pago.aprobado']);
  }, SLOW_TEST_MS);

  it('the customer authenticates while the reconciler cancels for the timeout: the cancel loses, APROBADO, charged once', async () => {
    await processor.injectWebhook({ fault: 'drop', type: 'payment_intent.succeeded' });
    await processor.inject({ operation: 'cancel_intent', fault: 'latency', latencyMs: 2_000 });
    const { pagoId, intent, numeroOrden } = await waitingPayment();
    await backdateAuthentication(db, pagoId);
    await eventually('the reconciler sending its cancel', async () => (await processor.pendingFaults()).length === 0);
    await authenticateAtProcessor(processor.url, intent, 'success');
    await decided(pagoId, 'APROBADO');
    expect(await intentStatusOf(db, intent)).toBe('succeeded');
    expect(await countChargesOfOrder(db, numeroOrden)).toBe(1);
    expect(await eventTypes(pagoId)).toEqual(['pago.requiere_autenticacion', 'pago.aprobado']);
  }, SLOW_TEST_MS);

  it('SIGKILLed while taking a webhook in (before its commit): nothing applied; the processor redelivers to the next service, applied once', async () => {
    const victim = await startService();
    // The webhook's question to the processor hangs, so the service dies between receiving and committing.
    await processor.inject({ operation: 'retrieve_intent', fault: 'latency', latencyMs: 5_000 });
    const { pagoId, intent } = await waitingPayment();
    await authenticateAtProcessor(processor.url, intent, 'success');
    await eventually('the webhook at the service, asking the processor', async () => (await processor.pendingFaults()).length === 0);
    await victim.stop('SIGKILL');
    expect((await estadoOf(pagoId)).estado).toBe('REQUIERE_AUTENTICACION');
    const [succeeded] = await processorEventsOf(db, 'payment_intent.succeeded', intent);
    expect(succeeded!.delivered_at).toBeNull();
    expect((await db.query('SELECT 1 FROM eventos_procesador WHERE id = $1', [succeeded!.id])).rowCount).toBe(0);
    service = await startService();
    await decided(pagoId, 'APROBADO');
    expect(await eventTypes(pagoId)).toEqual(['pago.requiere_autenticacion', 'pago.aprobado']);
  }, SLOW_TEST_MS);

  it.each([
    ['success', 'APROBADO', 201, 1],
    ['failure', 'RECHAZADO', 402, 0],
  ] as const)('a processing payment that settles later (%s): the webhook decides it; the client\'s retry gets that outcome, stored', async (outcome, estado, status, charges) => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'pm_card_processing' });
    const first = await pay(body, key);
    expect(first.status).toBe(503);
    expect(first.json.type).toMatch(/procesador-sin-respuesta$/);
    const { rows } = await db.query('SELECT id, gateway_charge_id FROM pagos WHERE numero_orden = $1', [body.numeroOrden]);
    await settleAtProcessor(processor.url, rows[0].gateway_charge_id, outcome);
    await decided(rows[0].id, estado);
    const retry = await pay(body, key);
    expect(retry.status).toBe(status);
    expect((await pay(body, key)).text).toBe(retry.text);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(charges);
    expect(await eventTypes(rows[0].id)).toEqual([estado === 'APROBADO' ? 'pago.aprobado' : 'pago.rechazado']);
  });
});
