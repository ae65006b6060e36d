import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { nuevoPago, postPago, postReembolso, type HttpResult, type PagoBody } from '../support/http.js';
import { countChargesOfOrder, keyRow } from '../support/ledger.js';
import { startProcessorProcess, type ProcessorProcess } from '../support/processor-process.js';
import { pagoAprobado, processorRefundsOf, refundTotals } from '../support/refunds.js';
import { backdateAbandoned, estadoOf } from '../support/stale-payments.js';
import { RECONCILE_EVERY_SECOND, RECONCILE_NEVER } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { eventually } from '../support/waiting.js';

/**
 * Exactly once across the second network hop, service → processor: the local processor runs as a
 * process of its own (so it lives on while a service is killed) and is told to lose answers, fail
 * with 500s before or after its work, be slow, or refuse connections. Real: processes, HTTP with the
 * official stripe SDK, PostgreSQL.
 */

// The tests that kill a service and wait for the reconciler.
const RECONCILED_TEST_TIMEOUT_MS = 120_000;
describe('the second hop: the processor loses answers, fails, is slow or down', () => {
  let url: string;
  let db: pg.Client;
  let processor: ProcessorProcess;
  let service: AppProcess;
  const victims: AppProcess[] = [];

  beforeAll(async () => {
    url = await createTestDatabase('second_hop');
    processor = await startProcessorProcess(url);
    // No SDK retries of its own unless a test says so: each of the service's recoveries is seen alone.
    service = await startAppProcess(url, { ...processor.serviceEnv, STRIPE_MAX_NETWORK_RETRIES: '0', PAGOS_RECONCILE_CRON: RECONCILE_EVERY_SECOND });
    db = await connect(url);
  });

  afterEach(async () => {
    await processor.clearFaults();
    await Promise.all(victims.splice(0).map((victim) => victim.stop('SIGKILL')));
  });

  afterAll(async () => {
    await db?.end();
    await service?.stop('SIGKILL');
    await processor?.stop('SIGKILL');
  });

  const pay = (key: string, body: PagoBody, baseUrl = service.baseUrl): Promise<HttpResult> => postPago(baseUrl, { client: ALICE, key, body });
  const operationOf = async (key: string): Promise<string> => (await keyRow(db, ALICE.clientId, key))!.operation_id;
  /** The processor's idempotency keys our service used for one operation's step, e.g. `confirm`. */
  const processorKeys = async (operationId: string, step: string): Promise<string[]> =>
    (await db.query(`SELECT key FROM procesador_local.idempotency_keys WHERE key LIKE $1 ORDER BY key`, [`pagos-${operationId}-${step}-%`])).rows.map((row) => row.key);

  it('the answer to the confirmation is lost after the charge: the client gets 201, charged once', async () => {
    await processor.inject({ operation: 'confirm_intent', fault: 'drop_after' });
    const key = randomUUID();
    const body = nuevoPago();
    const first = await pay(key, body);
    // The SDK resends a reset request once with the same key and gets the processor's replay; else our retry asks the intent.
    const answer = first.status === 201 ? first : await pay(key, body);
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({ numeroOrden: body.numeroOrden, estado: 'APROBADO' });
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
    const replay = await pay(key, body);
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(answer.text);
  });

  it('a 500 kept under the confirmation key after the charge: the intent, retrieved, says succeeded; never a second confirmation', async () => {
    await processor.inject({ operation: 'confirm_intent', fault: 'error_after' });
    const key = randomUUID();
    const body = nuevoPago();
    const first = await pay(key, body);
    expect(first.status).toBe(201);
    expect(first.json.estado).toBe('APROBADO');
    const retry = await pay(key, body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
    expect(await processorKeys(await operationOf(key), 'confirm')).toHaveLength(1);
  });

  it('a 500 before any work: 503 with Retry-After, nothing charged; the retry confirms under a new key, charged once', async () => {
    await processor.inject({ operation: 'confirm_intent', fault: 'error_before' });
    const key = randomUUID();
    const body = nuevoPago();
    const first = await pay(key, body);
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('5');
    expect(first.json).toMatchObject({ type: 'https://pagos.dev/problems/procesador-sin-respuesta' });
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(0);
    expect(await estadoOf(db, body.numeroOrden)).toBe('PENDIENTE');
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'released' });

    const retry = await pay(key, body);
    expect(retry.status).toBe(201);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
    const operationId = await operationOf(key);
    expect(await processorKeys(operationId, 'confirm')).toEqual([`pagos-${operationId}-confirm-1`, `pagos-${operationId}-confirm-2`]);
  });

  it('a 500 kept under the creation key: a new creation key next time (an intent with no payment method moves no money)', async () => {
    await processor.inject({ operation: 'create_intent', fault: 'error_after' });
    const key = randomUUID();
    const body = nuevoPago();
    expect((await pay(key, body)).status).toBe(503);
    const retry = await pay(key, body);
    expect(retry.status).toBe(201);
    const operationId = await operationOf(key);
    expect(await processorKeys(operationId, 'create')).toEqual([`pagos-${operationId}-create-1`, `pagos-${operationId}-create-2`]);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
  });

  it('the processor down: 503 with Retry-After, nothing charged; once it is back the retry charges once', async () => {
    await processor.refuse(3_000);
    const key = randomUUID();
    const body = nuevoPago();
    const down = await pay(key, body);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(0);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'released' });
    await eventually('the processor listens again', async () => (await fetch(`${processor.url}/v1/payment_intents`).catch(() => undefined)) !== undefined);
    const back = await pay(key, body);
    expect(back.status).toBe(201);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
  });

  it('the processor slower than the SDK timeout: 503 while it works; it charges, and the retry learns it: charged once', async () => {
    const impatient = await startAppProcess(url, { ...processor.serviceEnv, STRIPE_TIMEOUT_MS: '500', STRIPE_MAX_NETWORK_RETRIES: '0', DB_MIGRATIONS_RUN: 'false', PAGOS_RECONCILE_CRON: RECONCILE_NEVER });
    victims.push(impatient);
    await processor.inject({ operation: 'confirm_intent', fault: 'latency', latencyMs: 1_500 });
    const key = randomUUID();
    const body = nuevoPago();
    const first = await pay(key, body, impatient.baseUrl);
    expect(first.status).toBe(503);
    await eventually('the processor charged the order once', async () => (await countChargesOfOrder(db, body.numeroOrden)) === 1);
    const retry = await pay(key, body, impatient.baseUrl);
    expect(retry.status).toBe(201);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
  });

  it('the service SIGKILLed while its confirmation is at the processor, no client retry: the reconciler settles APROBADO; the late retry replays 201', async () => {
    const victim = await startAppProcess(url, { ...processor.serviceEnv, DB_MIGRATIONS_RUN: 'false', PAGOS_RECONCILE_CRON: RECONCILE_NEVER });
    victims.push(victim);
    await processor.inject({ operation: 'confirm_intent', fault: 'latency', latencyMs: 1_500 });
    const key = randomUUID();
    const body = nuevoPago();
    const lost = pay(key, body, victim.baseUrl).catch(() => undefined);
    // The processor claimed the confirmation's key: it is there, held by the latency, not still on its way.
    await eventually('the confirmation is at the processor', async () => (await db.query(
      `SELECT 1 FROM procesador_local.idempotency_keys WHERE key = 'pagos-' || (SELECT operation_id FROM pagos WHERE numero_orden = $1) || '-confirm-1'`,
      [body.numeroOrden],
    )).rowCount === 1);
    await victim.stop('SIGKILL');
    await lost;
    await eventually('the processor charged the order once', async () => (await countChargesOfOrder(db, body.numeroOrden)) === 1);
    await backdateAbandoned(db, body.numeroOrden);
    await eventually('the reconciler settles the payment', async () => (await estadoOf(db, body.numeroOrden)) !== 'PENDIENTE');
    expect(await estadoOf(db, body.numeroOrden)).toBe('APROBADO');
    const late = await pay(key, body);
    expect(late.status).toBe(201);
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
  }, RECONCILED_TEST_TIMEOUT_MS);

  it('killed after the intent was created, before its confirmation took effect: the reconciler cancels it, FALLIDO, and a new key pays the order once', async () => {
    const victim = await startAppProcess(url, { ...processor.serviceEnv, DB_MIGRATIONS_RUN: 'false', PAGOS_RECONCILE_CRON: RECONCILE_NEVER });
    victims.push(victim);
    // The confirmation waits at the processor before doing anything; both die there, so it never takes effect.
    await processor.inject({ operation: 'confirm_intent', fault: 'latency', latencyMs: 5_000 });
    const key = randomUUID();
    const body = nuevoPago();
    const lost = pay(key, body, victim.baseUrl).catch(() => undefined);
    await eventually('the intent is recorded', async () => (await db.query(`SELECT 1 FROM pagos WHERE numero_orden = $1 AND gateway_charge_id IS NOT NULL`, [body.numeroOrden])).rowCount === 1);
    await Promise.all([victim.stop('SIGKILL'), processor.stop('SIGKILL')]);
    await lost;
    processor = await startProcessorProcess(url, { PROCESSOR_PORT: new URL(processor.url).port });

    await backdateAbandoned(db, body.numeroOrden);
    await eventually('the reconciler settles the payment', async () => (await estadoOf(db, body.numeroOrden)) !== 'PENDIENTE');
    expect(await estadoOf(db, body.numeroOrden)).toBe('FALLIDO');
    const { rows } = await db.query(
      `SELECT pi.status FROM procesador_local.payment_intents pi JOIN pagos p ON p.gateway_charge_id = pi.id WHERE p.numero_orden = $1`,
      [body.numeroOrden],
    );
    expect(rows).toEqual([{ status: 'canceled' }]);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'released' });
    const paid = await pay(randomUUID(), body);
    expect(paid.status).toBe(201);
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
  }, RECONCILED_TEST_TIMEOUT_MS);

  describe('refunds', () => {
    const refund = (pagoId: string, key: string, monto: number): Promise<HttpResult> =>
      postReembolso(service.baseUrl, pagoId, { client: ALICE, key, body: { monto } });

    it('the answer is lost: the refund is resent with the same key and made once', async () => {
      const pagoId = await pagoAprobado(service.baseUrl, ALICE);
      await processor.inject({ operation: 'create_refund', fault: 'drop_after' });
      const key = randomUUID();
      const first = await refund(pagoId, key, 300);
      const answer = first.status === 201 ? first : await refund(pagoId, key, 300);
      expect(answer.status).toBe(201);
      expect(await processorRefundsOf(db, ALICE, key)).toEqual([{ amount: 300 }]);
      expect(await refundTotals(db, pagoId)).toEqual({ reservado: 300, reembolsado: 300, aprobados: 300, procesador: 300 });
    });

    it('a 500 after the refund was made: settled by listing the intent\'s refunds, made once', async () => {
      const pagoId = await pagoAprobado(service.baseUrl, ALICE);
      await processor.inject({ operation: 'create_refund', fault: 'error_after' });
      const key = randomUUID();
      const first = await refund(pagoId, key, 400);
      expect(first.status).toBe(201);
      expect(first.json).toMatchObject({ monto: 400, estado: 'APROBADO' });
      expect(await processorRefundsOf(db, ALICE, key)).toEqual([{ amount: 400 }]);
      expect(await refundTotals(db, pagoId)).toEqual({ reservado: 400, reembolsado: 400, aprobados: 400, procesador: 400 });
    });

    it('a 500 after a refund that is pending at the processor: the listing finds it, 202 PENDIENTE stored with its id, made once', async () => {
      const paid = await pay(randomUUID(), nuevoPago({ monto: 1000, token: 'pm_card_refundPending' }));
      await processor.inject({ operation: 'create_refund', fault: 'error_after' });
      const key = randomUUID();
      const first = await refund(paid.json.id, key, 400);
      expect(first.status).toBe(202);
      expect(first.json).toMatchObject({ monto: 400, estado: 'PENDIENTE' });
      expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'completed', response_status: 202 });
      const { rows } = await db.query(`SELECT r.gateway_refund_id FROM reembolsos r JOIN procesador_local.refunds g ON g.id = r.gateway_refund_id WHERE r.id = $1`, [first.json.id]);
      expect(rows).toHaveLength(1);
      expect(await processorRefundsOf(db, ALICE, key)).toEqual([{ amount: 400 }]);
    });

    it('a 500 before anything was refunded is indeterminate: 503 and PENDIENTE under the same key (retries too); after the lock timeout the reconciler finds nothing: FALLIDO, key released; the retry refunds under a new key, once', async () => {
      const pagoId = await pagoAprobado(service.baseUrl, ALICE);
      await processor.inject({ operation: 'create_refund', fault: 'error_before' });
      const key = randomUUID();
      const first = await refund(pagoId, key, 500);
      expect(first.status).toBe(503);
      expect(first.json).toMatchObject({ type: 'https://pagos.dev/problems/procesador-sin-respuesta' });
      expect(await refundTotals(db, pagoId)).toEqual({ reservado: 500, reembolsado: 0, aprobados: 0, procesador: 0 });
      // The retry resends the same key: the processor replays its 500, and the route never moves to another key.
      expect((await refund(pagoId, key, 500)).status).toBe(503);
      const operationId = await operationOf(key);
      const refundKeys = async () => (await db.query(`SELECT key FROM procesador_local.idempotency_keys WHERE key LIKE $1 ORDER BY key`, [`reembolso-${operationId}-%`])).rows.map((row) => row.key);
      expect(await refundKeys()).toEqual([`reembolso-${operationId}-1`]);

      // The existing rule: once abandoned past the lock timeout, a refund the processor doesn't list was never made.
      await db.query(`UPDATE reembolsos SET actualizado_en = now() - interval '1 hour' WHERE pago_id = $1`, [pagoId]);
      await eventually('the reconciler settles the refund', async () => (await db.query(`SELECT 1 FROM reembolsos WHERE pago_id = $1 AND estado = 'FALLIDO'`, [pagoId])).rowCount === 1);
      expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'released' });
      expect(await refundTotals(db, pagoId)).toEqual({ reservado: 0, reembolsado: 0, aprobados: 0, procesador: 0 });
      const retry = await refund(pagoId, key, 500);
      expect(retry.status).toBe(201);
      expect(await refundKeys()).toEqual([`reembolso-${operationId}-1`, `reembolso-${operationId}-2`]);
      expect(await processorRefundsOf(db, ALICE, key)).toEqual([{ amount: 500 }]);
      expect(await refundTotals(db, pagoId)).toEqual({ reservado: 500, reembolsado: 500, aprobados: 500, procesador: 500 });
    }, RECONCILED_TEST_TIMEOUT_MS);

    it('the processor down: 503, the refund stays PENDIENTE; the retry refunds once', async () => {
      const pagoId = await pagoAprobado(service.baseUrl, ALICE);
      await processor.refuse(3_000);
      const key = randomUUID();
      const down = await refund(pagoId, key, 200);
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
      await eventually('the processor listens again', async () => (await fetch(`${processor.url}/v1/refunds`).catch(() => undefined)) !== undefined);
      const back = await refund(pagoId, key, 200);
      expect(back.status).toBe(201);
      expect(await processorRefundsOf(db, ALICE, key)).toEqual([{ amount: 200 }]);
    });
  });
});
