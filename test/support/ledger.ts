import type pg from 'pg';
import { waitUntil } from './waiting.js';

/**
 * The local processor's charges (one row per successful confirmation, in its schema of the same
 * database), each with the amount and the base key of the operation that made it
 * (`operation_key = 'pagos-' || pagos.operation_id`), for `where` to filter on.
 */
const PROCESSOR_CHARGES = `
  SELECT c.id, c.amount, c.payment_intent, 'pagos-' || (pi.metadata->>'operation_id') AS operation_key
    FROM procesador_local.charges c JOIN procesador_local.payment_intents pi ON pi.id = c.payment_intent`;

/** SQL for the number of charges the processor made for payment row `alias` (of `pagos`), for a query's select list. */
export function chargesOfPagoSql(alias: string): string {
  return `(SELECT count(*)::int FROM procesador_local.charges c JOIN procesador_local.payment_intents pi ON pi.id = c.payment_intent
            WHERE pi.metadata->>'operation_id' = ${alias}.operation_id)`;
}

/** How many charges the processor made: the number that must never exceed the operations. */
export async function countCharges(db: pg.Client, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM (${PROCESSOR_CHARGES}) charges WHERE ${where}`, params);
  return rows[0].n;
}

/** The charges the processor made for one order's payments. */
export function countChargesOfOrder(db: pg.Client, numeroOrden: string): Promise<number> {
  return countCharges(db, `operation_key IN (SELECT 'pagos-' || operation_id FROM pagos WHERE numero_orden = $1)`, [numeroOrden]);
}

export async function countPagos(db: pg.Client, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM pagos WHERE ${where}`, params);
  return rows[0].n;
}

/** The key's live row, else its latest expired one (expired rows stay until their partition is dropped). */
export async function keyRow(db: pg.Client, scope: string, key: string): Promise<Record<string, any> | undefined> {
  const { rows } = await db.query('SELECT * FROM idempotency_keys WHERE scope = $1 AND key = $2 ORDER BY expires_at DESC LIMIT 1', [scope, key]);
  return rows[0];
}

/** Creates the partitions of the UTC days from `daysAgo` days ago to today, as the migration creates days ahead. */
export async function createPastKeyPartitions(db: pg.Client, daysAgo: number): Promise<void> {
  await db.query(`SELECT create_daily_partitions('idempotency_keys', now() - make_interval(days => $1::int), now())`, [daysAgo]);
}

/**
 * Completed keys that expired a day ago, named `${prefix}1…${count}`, in yesterday's partition (created
 * if missing): what the purge must drop.
 */
export async function insertExpiredKeys(db: pg.Client, count: number, prefix: string, scope = 'alice', daysAgo = 1): Promise<void> {
  await createPastKeyPartitions(db, daysAgo);
  await db.query(
    `INSERT INTO idempotency_keys (scope, key, request_hash, status, operation_id, response_status, response_headers, response_body, created_at, expires_at)
     SELECT $3, $2 || i, repeat('a', 64), 'completed', gen_random_uuid(), 201, '{}', '{}',
            now() - make_interval(days => $4::int + 1), now() - make_interval(days => $4::int)
       FROM generate_series(1, $1::int) AS i`,
    [count, prefix, scope, daysAgo],
  );
  // The purge reports a dropped day's rows from its statistics: bring them up to date, as autovacuum
  // would before long. A day last analyzed while it was empty would otherwise report none.
  await db.query('ANALYZE idempotency_keys');
}

/** Resolves once some attempt has claimed `key`. */
export async function waitForClaim(db: pg.Client, key: string): Promise<void> {
  await waitUntil(async () => (await db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key])).rowCount === 1);
}

/** Backdates the claim's lease by an hour: a retry may take it over now, without waiting out the lock timeout. */
export async function expireLease(db: pg.Client, key: string): Promise<void> {
  await db.query(`UPDATE idempotency_keys SET locked_at = now() - interval '1 hour' WHERE key = $1`, [key]);
}
