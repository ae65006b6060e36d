import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { get, nuevoPago, postPago, type PagoBody } from '../support/http.js';
import { chargesOfPagoSql, countCharges, countChargesOfOrder, keyRow } from '../support/ledger.js';
import { sampleOf, scrape } from '../support/metrics.js';
import { backdateAbandoned, estadoOf, recordStateWrites, settledEstado } from '../support/stale-payments.js';
import { NO_WEBHOOKS, RECONCILE_EVERY_SECOND, RECONCILE_NEVER, survivorAndVictims } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

/**
 * Payments whose client never comes back: the service is SIGKILLed mid-payment and nobody retries.
 * The reconciler of a surviving process settles them. Real: service processes (each with its local
 * processor, whose state is in the same database), SIGKILL, PostgreSQL. Abandonment is dated back in SQL instead of waiting out
 * the lock timeout; the survivors reconcile every second.
 */

describe('payments abandoned after a crash settle themselves', () => {
  // Webhooks off: the reconciler is what settles here (a webhook would decide the charged ones first).
  const crash = survivorAndVictims('abandoned', NO_WEBHOOKS);

  /** A payment sent to a process that is SIGKILLed once `marker` (SQL, $1 = order) holds; nobody retries. */
  const crashDuring = async (marker: string): Promise<{ key: string; body: PagoBody }> => {
    const victim = await crash.startVictim({ GATEWAY_LATENCY_MS: '3000' });
    const key = randomUUID();
    const body = nuevoPago();
    const lost = postPago(victim.baseUrl, { client: ALICE, key, body }).catch(() => undefined);
    await waitUntil(async () => ((await crash.db.query(marker, [body.numeroOrden])).rowCount ?? 0) > 0);
    await victim.stop('SIGKILL');
    await lost;
    expect(await estadoOf(crash.db, body.numeroOrden)).toBe('PENDIENTE');
    return { key, body };
  };
  const CHARGED = `SELECT 1 FROM pagos p WHERE p.numero_orden = $1 AND ${chargesOfPagoSql('p')} > 0`;
  const STARTED = `SELECT 1 FROM pagos WHERE numero_orden = $1`;
  const reconciled = async (result: string): Promise<number> => sampleOf(await scrape(crash.survivor.baseUrl), 'pagos_reconciled_total', { result }) ?? 0;

  it('charged before the crash: APROBADO, the key answers 201 naming it, and the order is paid', async () => {
    const approvedBefore = await reconciled('approved');
    const { key, body } = await crashDuring(CHARGED);
    await backdateAbandoned(crash.db, body.numeroOrden);
    expect(await settledEstado(crash.db, body.numeroOrden)).toBe('APROBADO');
    expect(await reconciled('approved')).toBe(approvedBefore + 1);

    const late = await postPago(crash.survivor.baseUrl, { client: ALICE, key, body });
    expect(late.status).toBe(201);
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    expect(late.json).toMatchObject({ numeroOrden: body.numeroOrden, estado: 'APROBADO' });
    expect(late.headers.get('location')).toBe(`/pagos/${late.json.id}`);
    expect(late.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // The very bytes the route gives for that payment.
    expect(late.text).toBe((await get(crash.survivor.baseUrl, `/pagos/${late.json.id}`, ALICE)).text);

    const other = await postPago(crash.survivor.baseUrl, { client: ALICE, key: randomUUID(), body });
    expect(other.status).toBe(409);
    expect(other.json).toMatchObject({ type: expect.stringContaining('orden-ya-pagada'), pagoExistenteId: late.json.id });
    expect(await countChargesOfOrder(crash.db, body.numeroOrden)).toBe(1);
  });

  it('killed before the charge: FALLIDO and the key released, so a new key pays the order, charged once', async () => {
    const { key, body } = await crashDuring(STARTED);
    await backdateAbandoned(crash.db, body.numeroOrden);
    expect(await settledEstado(crash.db, body.numeroOrden)).toBe('FALLIDO');
    expect(await keyRow(crash.db, ALICE.clientId, key)).toMatchObject({ status: 'released' });

    const paid = await postPago(crash.survivor.baseUrl, { client: ALICE, key: randomUUID(), body });
    expect(paid.status).toBe(201);
    expect(paid.json.estado).toBe('APROBADO');
    expect(await countChargesOfOrder(crash.db, body.numeroOrden)).toBe(1);
  });

  it('killed before the charge: a late retry of the original key runs the same operation again and charges once', async () => {
    const { key, body } = await crashDuring(STARTED);
    const [{ operation_id: operationId }] = (await crash.db.query(`SELECT operation_id FROM pagos WHERE numero_orden = $1`, [body.numeroOrden])).rows;
    await backdateAbandoned(crash.db, body.numeroOrden);
    expect(await settledEstado(crash.db, body.numeroOrden)).toBe('FALLIDO');

    const late = await postPago(crash.survivor.baseUrl, { client: ALICE, key, body });
    expect(late.status).toBe(201);
    expect(late.headers.get('idempotent-replayed')).toBeNull();
    const { rows } = await crash.db.query(`SELECT id, estado, operation_id FROM pagos WHERE numero_orden = $1`, [body.numeroOrden]);
    expect(rows).toEqual([{ id: late.json.id, estado: 'APROBADO', operation_id: operationId }]);
    expect(await countCharges(crash.db, `operation_key = $1`, [`pagos-${operationId}`])).toBe(1);
  });

  it('a slow live request whose lease is renewed is never reconciled, though its payment is older than the lock timeout', async () => {
    const slow = await crash.startVictim({ GATEWAY_LATENCY_MS: '6000', IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: '2', PAGOS_RECONCILE_CRON: RECONCILE_EVERY_SECOND });
    const body = nuevoPago();
    const answer = postPago(slow.baseUrl, { client: ALICE, key: randomUUID(), body });
    // Past the lock timeout while the processor call still runs: a candidate by age, held by a live lease.
    await waitUntil(async () => (sampleOf(await scrape(slow.baseUrl), 'pagos_stale_pending') ?? 0) >= 1);
    expect(await estadoOf(crash.db, body.numeroOrden)).toBe('PENDIENTE');
    const first = await answer;
    expect(first.status).toBe(201);
    expect(first.json.estado).toBe('APROBADO');
    const exposition = await scrape(slow.baseUrl);
    for (const result of ['approved', 'declined', 'failed', 'unreachable']) expect(sampleOf(exposition, 'pagos_reconciled_total', { result })).toBe(0);
    expect(sampleOf(exposition, 'pagos_reconcile_runs_total', { result: 'success' })).toBeGreaterThan(0);
  });

  it('the processor unreachable during a pass: nothing is settled, counted; the next pass settles', async () => {
    const { body } = await crashDuring(CHARGED);
    const unreachableBefore = await reconciled('unreachable');
    // The local processor's intents are its whole state: without them, it answers 500s.
    await crash.db.query(`ALTER TABLE procesador_local.payment_intents RENAME TO payment_intents_offline`);
    try {
      await backdateAbandoned(crash.db, body.numeroOrden);
      await waitUntil(async () => (await reconciled('unreachable')) > unreachableBefore);
      expect(await estadoOf(crash.db, body.numeroOrden)).toBe('PENDIENTE');
    } finally {
      await crash.db.query(`ALTER TABLE procesador_local.payment_intents_offline RENAME TO payment_intents`);
    }
    expect(await settledEstado(crash.db, body.numeroOrden)).toBe('APROBADO');
  });
});

describe('two replicas reconciling the same stale payments at once', () => {
  it('each of 20 stale payments is settled exactly once (one write per payment and per key)', async () => {
    const url = await createTestDatabase('abandoned_replicas');
    // A service that never reconciles migrates the database and lays out its local processor's schema.
    const setup = await startAppProcess(url, { ...NO_WEBHOOKS, PAGOS_RECONCILE_CRON: RECONCILE_NEVER });
    await setup.stop('SIGTERM');
    const db = await connect(url);
    const replicas: AppProcess[] = [];
    try {
      await recordStateWrites(db);
      const outcomes = await insertAbandoned(db, 20);
      // Both tick on the same wall-clock second, so their passes overlap.
      replicas.push(...(await Promise.all([1, 2].map(() => startAppProcess(url, { ...NO_WEBHOOKS, DB_MIGRATIONS_RUN: 'false', PAGOS_RECONCILE_CRON: RECONCILE_EVERY_SECOND })))));
      await waitUntil(async () => (await db.query(`SELECT 1 FROM pagos WHERE estado = 'PENDIENTE'`)).rowCount === 0);

      const { rows: writes } = await db.query(`SELECT tbl, id, count(*)::int AS n FROM test_writes GROUP BY tbl, id`);
      expect(writes).toHaveLength(40);
      expect(writes.every((write) => write.n === 1)).toBe(true);
      const { rows } = await db.query(
        `SELECT p.estado, k.status, k.response_status FROM pagos p JOIN idempotency_keys k ON k.operation_id::text = p.operation_id ORDER BY p.numero_orden`,
      );
      expect(rows).toEqual(outcomes.map((outcome) => SETTLED[outcome]));
      let counted = 0;
      for (const replica of replicas) {
        const exposition = await scrape(replica.baseUrl);
        for (const result of ['approved', 'declined', 'failed']) counted += sampleOf(exposition, 'pagos_reconciled_total', { result })!;
      }
      expect(counted).toBe(20);
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop('SIGKILL')));
      await db.end();
    }
  });
});

type Outcome = 'approved' | 'declined' | 'none';
const SETTLED: Record<Outcome, { estado: string; status: string; response_status: number | null }> = {
  approved: { estado: 'APROBADO', status: 'completed', response_status: 201 },
  declined: { estado: 'RECHAZADO', status: 'completed', response_status: 402 },
  none: { estado: 'FALLIDO', status: 'released', response_status: null },
};

/**
 * `count` payments PENDIENTE for an hour with an in_flight claim whose owner died; the processor
 * charged, declined or never saw each (its intent written straight into the local processor's tables).
 */
async function insertAbandoned(db: pg.Client, count: number): Promise<Outcome[]> {
  const outcomes = Array.from({ length: count }, (_, i): Outcome => (['approved', 'declined', 'none'] as const)[i % 3]!);
  for (const [i, outcome] of outcomes.entries()) {
    const [pagoId, operationId] = [randomUUID(), randomUUID()];
    const orden = `ORD-STALE-${String(i).padStart(2, '0')}`;
    const intentId = outcome === 'none' ? null : await insertIntent(db, pagoId, operationId, outcome);
    await db.query(
      `INSERT INTO pagos (id, client_id, operation_id, numero_orden, monto, moneda, estado, gateway_charge_id, creado_en, actualizado_en)
       VALUES ($1, 'alice', $2, $3, 1999, 'EUR', 'PENDIENTE', $4, now() - interval '1 hour', now() - interval '1 hour')`,
      [pagoId, operationId, orden, intentId],
    );
    await db.query(
      `INSERT INTO idempotency_keys (scope, key, request_hash, status, operation_id, lock_token, locked_at, created_at, expires_at)
       VALUES ('alice', $1, repeat('a', 64), 'in_flight', $2, gen_random_uuid(), now() - interval '1 hour', now() - interval '1 hour', now() + interval '1 day')`,
      [randomUUID(), operationId],
    );
  }
  return outcomes;
}

const DECLINE = { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' };

/** A confirmed intent at the local processor: succeeded with its charge, or declined. */
async function insertIntent(db: pg.Client, pagoId: string, operationId: string, outcome: 'approved' | 'declined'): Promise<string> {
  const intentId = `pi_stale${operationId.replaceAll('-', '').slice(0, 16)}`;
  const chargeId = outcome === 'approved' ? `ch_stale${operationId.replaceAll('-', '').slice(0, 16)}` : null;
  await db.query(
    `INSERT INTO procesador_local.payment_intents (id, amount, currency, status, payment_method, payment_method_types, last_payment_error, metadata, latest_charge)
     VALUES ($1, 1999, 'eur', $2, 'pm_card_visa', '["card"]', $3, $4, $5)`,
    [intentId, outcome === 'approved' ? 'succeeded' : 'requires_payment_method', outcome === 'declined' ? DECLINE : null, { pago_id: pagoId, operation_id: operationId }, chargeId],
  );
  if (chargeId) await db.query(`INSERT INTO procesador_local.charges (id, payment_intent, amount) VALUES ($1, $2, 1999)`, [chargeId, intentId]);
  return intentId;
}
