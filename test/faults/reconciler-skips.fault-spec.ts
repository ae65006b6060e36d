import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { stripeAt } from '../support/local-processor.js';
import { sampleOf, scrape } from '../support/metrics.js';
import { startProcessorProcess, type ProcessorProcess } from '../support/processor-process.js';
import { RECONCILE_EVERY_SECOND, RECONCILE_NEVER } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { eventually } from '../support/waiting.js';

// The reconciler walks stale payments in id order: these two come first, the settleable one last.
const STORED_500_ID = '00000000-0000-4000-8000-000000000001';
const UNKNOWN_INTENT_ID = '00000000-0000-4000-8000-000000000002';
const SETTLEABLE_ID = 'ffffffff-ffff-4fff-8fff-fffffffffff1';

/**
 * A processor answer about one payment that the reconciler can't act on — a 500 the processor keeps
 * under that payment's cancel key, a 404 for an intent it doesn't know — skips that payment (a log
 * line, `pagos_reconciled_total{result="skipped"}`) and never stops the pass for the payments after
 * it. Real: the processor as its own process with a fault injected, the service, PostgreSQL.
 */
describe('the reconciler skips what it cannot act on and goes on', () => {
  let url: string;
  let db: pg.Client;
  let processor: ProcessorProcess;
  let service: AppProcess;

  beforeAll(async () => {
    url = await createTestDatabase('reconciler_skips');
    processor = await startProcessorProcess(url);
    // Lays out the schema (migrations) and nothing else: the payments below are written by hand.
    const setup = await startAppProcess(url, { ...processor.serviceEnv, PAGOS_RECONCILE_CRON: RECONCILE_NEVER });
    await setup.stop();
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await service?.stop('SIGKILL');
    await processor?.stop('SIGKILL');
  });

  const abandoned = async (id: string, intentId: string): Promise<void> => {
    const operationId = randomUUID();
    await db.query(
      `INSERT INTO pagos (id, client_id, operation_id, numero_orden, monto, moneda, estado, gateway_charge_id, creado_en, actualizado_en)
       VALUES ($1, 'alice', $2, $3, 1999, 'EUR', 'PENDIENTE', $4, now() - interval '1 hour', now() - interval '1 hour')`,
      [id, operationId, `ORD-SKIP-${id.slice(-2)}`, intentId],
    );
  };
  const estadoOf = async (id: string): Promise<string> => (await db.query('SELECT estado FROM pagos WHERE id = $1', [id])).rows[0].estado;

  it('a stored 500 and an unknown intent are skipped, every pass; the payment after them is still settled in the first', async () => {
    const stripe = stripeAt(processor.url);
    const waiting = await stripe.paymentIntents.create({ amount: 1999, currency: 'eur', automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    await abandoned(STORED_500_ID, waiting.id);
    await abandoned(UNKNOWN_INTENT_ID, 'pi_the_processor_never_made');
    const charged = await stripe.paymentIntents.create({ amount: 1999, currency: 'eur', payment_method: 'pm_card_visa', confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    await abandoned(SETTLEABLE_ID, charged.id);
    // The reconciler's cancel of the waiting intent fails with a 500 the processor keeps under its key.
    await processor.inject({ operation: 'cancel_intent', fault: 'error_before' });

    service = await startAppProcess(url, { ...processor.serviceEnv, DB_MIGRATIONS_RUN: 'false', STRIPE_MAX_NETWORK_RETRIES: '0', PAGOS_RECONCILE_CRON: RECONCILE_EVERY_SECOND });
    await eventually('the payment after the skipped ones settled', async () => (await estadoOf(SETTLEABLE_ID)) === 'APROBADO');
    const skipped = async (): Promise<number> => sampleOf(await scrape(service.baseUrl), 'pagos_reconciled_total', { result: 'skipped' }) ?? 0;
    await eventually('a second pass skipping both again', async () => (await skipped()) >= 4);
    expect(await estadoOf(STORED_500_ID)).toBe('PENDIENTE');
    expect(await estadoOf(UNKNOWN_INTENT_ID)).toBe('PENDIENTE');
    expect(sampleOf(await scrape(service.baseUrl), 'pagos_reconciled_total', { result: 'unreachable' })).toBe(0);
    expect(service.output()).toContain(`pago ${STORED_500_ID}`);
    expect(service.output()).toContain('the processor answered what this pass cannot act on');
    // The waiting intent was never canceled: the processor kept the 500 instead.
    expect((await stripe.paymentIntents.retrieve(waiting.id)).status).toBe('requires_payment_method');
  });
});
