import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import type Stripe from 'stripe';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { get, type HttpResult, nuevoPago, postPago, postReembolso } from '../support/http.js';
import { keyRow } from '../support/ledger.js';
import { addWebhookFault, stripeAt, testHelper, waitUntil, webhookDeliveries } from '../support/local-processor.js';
import { sampleOf, scrape } from '../support/metrics.js';
import { type ProcessorProcess, startProcessorProcess } from '../support/processor-process.js';
import { reembolsoRow, refundEvents, refundTotals } from '../support/refunds.js';
import { deliverStripeEvent, sendProcessorWebhooksTo, TEST_WEBHOOK_SECRET } from '../support/stripe-webhooks.js';
import { RECONCILE_EVERY_SECOND } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * What the processor decides after it answered a refund: pending refunds that settle later, accepted
 * refunds that fail later, told by Stripe's signed webhooks or found by the reconciler. Real: the
 * local processor as its own process, sending its signed webhooks to the service's
 * POST /stripe/webhooks over HTTP; the service process; PostgreSQL. The bank's late answer is the
 * processor's test helper `POST /v1/test_helpers/refunds/:id/settle`.
 */
describe('refund outcomes decided after the answer (webhooks, reconciler)', () => {
  let url: string;
  let db: pg.Client;
  let processor: ProcessorProcess;
  let service: AppProcess;
  let stripe: Stripe;

  beforeAll(async () => {
    url = await createTestDatabase('refund_outcomes');
    processor = await startProcessorProcess(url, { PROCESSOR_WEBHOOK_RETRY_BASE_MS: '100', PROCESSOR_WEBHOOK_RETRY_MAX_MS: '400' });
    service = await startAppProcess(url, {
      ...processor.serviceEnv, STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, STRIPE_MAX_NETWORK_RETRIES: '0', PAGOS_RECONCILE_CRON: RECONCILE_EVERY_SECOND,
    });
    await sendProcessorWebhooksTo(processor.url, service.baseUrl);
    stripe = stripeAt(processor.url);
    db = await connect(url);
  });

  afterEach(async () => processor.clearFaults());

  afterAll(async () => {
    await db?.end();
    await service?.stop('SIGKILL');
    await processor?.stop('SIGKILL');
  });

  /** An APROBADO payment of 1000 paid with `token` (the processor's refund behaviour follows the card). */
  const paid = async (token: string): Promise<string> => {
    const answer = await postPago(service.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago({ monto: 1000, token }) });
    expect(answer.status).toBe(201);
    return answer.json.id;
  };
  const refund = (pagoId: string, key: string, monto: number): Promise<HttpResult> => postReembolso(service.baseUrl, pagoId, { client: ALICE, key, body: { monto } });
  const settle = (refundId: string, outcome: 'succeeded' | 'failed') => testHelper(stripe, `refunds/${refundId}/settle`, { outcome });
  const estadoBecomes = (id: string, estado: string) => waitUntil(async () => (await reembolsoRow(db, id)).estado === estado, 20_000);
  const refundsMetric = async (result: string) => sampleOf(await scrape(service.baseUrl), 'pagos_refunds_total', { result }) ?? 0;

  it('pending at the processor: a stored 202 PENDIENTE (a retry replays it); the webhook of its success makes it APROBADO, reembolso.aprobado once', async () => {
    const pagoId = await paid('pm_card_refundPending');
    const pendingBefore = await refundsMetric('pending');
    const key = randomUUID();
    const accepted = await refund(pagoId, key, 300);
    expect(accepted.status).toBe(202);
    expect(accepted.json).toMatchObject({ pagoId, monto: 300, estado: 'PENDIENTE' });
    expect(accepted.headers.get('location')).toBe(`/pagos/${pagoId}/reembolsos/${accepted.json.id}`);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'completed', response_status: 202 });
    expect(await refundsMetric('pending')).toBe(pendingBefore + 1);
    const { gateway_refund_id: refundId } = await reembolsoRow(db, accepted.json.id);
    expect(refundId).toMatch(/^re_/);
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 300, reembolsado: 0, aprobados: 0, procesador: 300 });

    const replay = await refund(pagoId, key, 300);
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(accepted.text);

    await settle(refundId!, 'succeeded');
    await estadoBecomes(accepted.json.id, 'APROBADO');
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 300, reembolsado: 300, aprobados: 300, procesador: 300 });
    expect((await get(service.baseUrl, `/pagos/${pagoId}`, ALICE)).json.montoReembolsado).toBe(300);
    await waitUntil(async () => (await webhookDeliveries(processor.url)).every((delivery) => delivery.delivered_at !== null), 20_000);
    expect(await refundEvents(db, accepted.json.id)).toEqual(['reembolso.aprobado']);
    // The key keeps its 202: the answer the client was given, now read with GET.
    expect((await refund(pagoId, key, 300)).text).toBe(accepted.text);
    expect((await get(service.baseUrl, accepted.headers.get('location')!, ALICE)).json.estado).toBe('APROBADO');
  });

  it('refundFail: 201 APROBADO, then the bank fails it; the webhook (refund.failed delivered twice) makes it FALLIDO, the balance restored, reembolso.fallido once', async () => {
    const pagoId = await paid('pm_card_refundFail');
    const created = await refund(pagoId, randomUUID(), 1000);
    expect(created.status).toBe(201);
    expect(created.json.estado).toBe('APROBADO');
    const { gateway_refund_id: refundId } = await reembolsoRow(db, created.json.id);
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 1000, reembolsado: 1000, aprobados: 1000, procesador: 1000 });

    const duplicatesBefore = sampleOf(await scrape(service.baseUrl), 'pagos_processor_events_total', { outcome: 'duplicate' }) ?? 0;
    await addWebhookFault(processor.url, { fault: 'duplicate', type: 'refund.failed' });
    await settle(refundId!, 'failed');
    await estadoBecomes(created.json.id, 'FALLIDO');
    await waitUntil(async () => (await webhookDeliveries(processor.url)).every((delivery) => delivery.delivered_at !== null), 20_000);
    expect(await refundEvents(db, created.json.id)).toEqual(['reembolso.aprobado', 'reembolso.fallido']);
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 0, reembolsado: 0, aprobados: 0, procesador: 0 });
    expect((await get(service.baseUrl, `/pagos/${pagoId}`, ALICE)).json.montoReembolsado).toBe(0);
    // The second copy of refund.failed found its event id applied.
    await waitUntil(async () => (sampleOf(await scrape(service.baseUrl), 'pagos_processor_events_total', { outcome: 'duplicate' }) ?? 0) > duplicatesBefore, 10_000);

    // What came back can be refunded again, in full, at the processor too.
    const again = await refund(pagoId, randomUUID(), 1000);
    expect(again.status).toBe(201);
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 1000, reembolsado: 1000, aprobados: 1000, procesador: 1000 });
  });

  it('20 deciders of one failed refund at once (signed events of every type, the processor\'s own, the reconciler): one transition, one event', async () => {
    const pagoId = await paid('pm_card_refundPending');
    const accepted = await refund(pagoId, randomUUID(), 400);
    expect(accepted.status).toBe(202);
    const { gateway_refund_id: refundId } = await reembolsoRow(db, accepted.json.id);
    await settle(refundId!, 'failed');
    // Stale for the reconciler too: it retrieves the refund and decides alongside the webhooks.
    await db.query(`UPDATE reembolsos SET actualizado_en = now() - interval '1 hour' WHERE id = $1`, [accepted.json.id]);
    const types = ['refund.created', 'refund.updated', 'refund.failed', 'charge.refund.updated'];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      deliverStripeEvent(service.baseUrl, { type: types[i % types.length]!, object: { id: refundId!, object: 'refund' } })));
    for (const answer of answers) expect(answer.status).toBe(200);
    await estadoBecomes(accepted.json.id, 'FALLIDO');
    await waitUntil(async () => (await webhookDeliveries(processor.url)).every((delivery) => delivery.delivered_at !== null), 20_000);
    expect(await refundEvents(db, accepted.json.id)).toEqual(['reembolso.fallido']);
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 0, reembolsado: 0, aprobados: 0, procesador: 0 });
  });

  it('an event about a refund that is not ours is acknowledged and ignored; a bad signature is a 400', async () => {
    expect((await deliverStripeEvent(service.baseUrl, { type: 'refund.updated', object: { id: 're_not_ours' } })).json).toEqual({ received: true, outcome: 'ignored' });
    expect((await deliverStripeEvent(service.baseUrl, { type: 'refund.updated', object: { id: 're_not_ours' } }, 'whsec_wrong_secret_value')).status).toBe(400);
  });

  it('the reconciler skips a refund the processor answers about with a 404, logs it, counts it, and settles the ones after it in the same pass', async () => {
    const pagoId = await paid('pm_card_visa');
    const skippedBefore = sampleOf(await scrape(service.baseUrl), 'pagos_reconciled_total', { result: 'skipped' }) ?? 0;
    // Three stale refunds in id order, each reserving 100: the first names a refund the processor doesn't know (404).
    // (A 5xx to a read is the processor failing, not this row: it stops the pass as unreachable; see abandoned-payments.)
    const [first, second, third] = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003'];
    await db.query(
      `WITH reservado AS (UPDATE pagos SET monto_reservado_reembolsos = monto_reservado_reembolsos + 300 WHERE id = $1 RETURNING id, gateway_charge_id)
       INSERT INTO reembolsos (id, pago_id, client_id, operation_id, monto, moneda, estado, gateway_charge_id, gateway_refund_id, actualizado_en)
       SELECT v.id::uuid, r.id, 'alice', gen_random_uuid()::text, 100, 'EUR', 'PENDIENTE', r.gateway_charge_id, v.refund, now() - interval '1 hour'
         FROM reservado r, (VALUES ($2, 're_unknown_to_the_processor'), ($3, NULL), ($4, NULL)) AS v (id, refund)`,
      [pagoId, first, second, third],
    );
    // The ones after it are settled while the first is skipped: never made → FALLIDO.
    await estadoBecomes(third, 'FALLIDO');
    expect((await reembolsoRow(db, second)).estado).toBe('FALLIDO');
    expect((await reembolsoRow(db, first)).estado).toBe('PENDIENTE');
    expect(sampleOf(await scrape(service.baseUrl), 'pagos_reconciled_total', { result: 'skipped' })).toBeGreaterThanOrEqual(skippedBefore + 1);
    const lines = service.output().split('\n').filter((line) => line.includes('the processor answered what this pass cannot act on'));
    expect(lines.some((line) => line.includes(`reembolso ${first}`))).toBe(true);
    expect(await refundTotals(db, pagoId)).toMatchObject({ reservado: 100, reembolsado: 0 });
    await db.query(`UPDATE pagos p SET monto_reservado_reembolsos = 0 FROM reembolsos r WHERE r.id = $1 AND p.id = r.pago_id`, [first]);
    await db.query(`UPDATE reembolsos SET estado = 'FALLIDO' WHERE id = $1`, [first]);
  });
});
