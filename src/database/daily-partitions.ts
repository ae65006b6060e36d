import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { ListenedPgClient } from './listened-pg-client.js';
import { SQLSTATE, sqlStateOf } from './postgres-errors.js';
import { type Queryable, queryRows } from './query-rows.js';
import {
  CREATE_DAILY_PARTITIONS, type DailyPartitionedTable, detachDailyPartition, DROP_DETACHED_DAILY_PARTITION, EXPIRED_DAILY_PARTITIONS,
  finalizeDailyPartitionDetach, partitionNamePattern, TRY_LOCK_PARTITION_REMOVAL, UNLOCK_PARTITION_REMOVAL,
} from './daily-partitions.sql.js';

export type { DailyPartitionedTable } from './daily-partitions.sql.js';

/** A partition the purge dropped, and about how many rows went with it (the table's statistics). */
export interface DroppedPartition {
  readonly table: DailyPartitionedTable;
  readonly name: string;
  readonly rows: number;
}

/** A table whose days are dropped once wholly older than `retainedSeconds` (0: once past). */
export interface ExpiringTable {
  readonly table: DailyPartitionedTable;
  readonly retainedSeconds: number;
}

type RemovalState = 'attached' | 'detach_pending' | 'detached';

/** Creates the partitions of `table` from today to `aheadSeconds` from now; returns how many were new. */
export async function createDailyPartitions(pool: pg.Pool, table: DailyPartitionedTable, aheadSeconds: number): Promise<number> {
  const [row] = await queryRows<{ created: number }>(pool, CREATE_DAILY_PARTITIONS, [table, aheadSeconds]);
  return row!.created;
}

export const SECONDS_PER_DAY = 86_400;

// The purge's own connection, named so that it shows as such in pg_stat_activity.
const PURGE_APPLICATION_NAME = 'pagos-purge';
const CONNECT_TIMEOUT_MS = 5_000;

// Between the purge's steps (each detach, each drop): each step's cost lands apart from the others.
// Dropping a day's files is kernel work (about 0.3 ms per MB, 110 ms for a day of 333k keys under
// load) and a detach makes every connection plan its statements on the table again; both slow the
// requests in flight beside them. In the bench (1M keys over three days, three purges a setting),
// the requests in flight during the purge had a p99 ×1.4–2.0 that of the same load's with the steps
// back to back, ×1.54 (×1.55, ×1.54, ×1.0) a second apart, ×0.9 (×0.83, ×1.03, ×0.9) three seconds
// apart: the purge then takes about 15 s instead of 5, at night.
const PAUSE_BETWEEN_STEPS_MS = 3_000;

/**
 * Detaches (CONCURRENTLY) and drops every wholly expired partition of each table, in the order given,
 * a pause between steps, finishing any removal a previous run left halfway. One replica at a time (a
 * session advisory try-lock on the set): another replica's run returns [] at once and leaves the work
 * to this one.
 * On a connection of its own to `sessionUrl` (see SESSION_DATABASE_URL), closed after:
 * - never one of the pool's: a detach waits for older snapshots, and a pooled connection held that
 *   long is one the requests would queue for;
 * - never through a transaction-mode pooler: it would run the unlock on another server connection
 *   than the lock, and leave the lock held there, skipping every later run that lands elsewhere.
 */
export async function dropExpiredDailyPartitions(sessionUrl: string, tables: readonly ExpiringTable[], stopping?: AbortSignal): Promise<DroppedPartition[]> {
  const client = new ListenedPgClient({ connectionString: sessionUrl, application_name: PURGE_APPLICATION_NAME, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
  await client.connect();
  try {
    return await dropWhileLocked(client, tables, stopping);
  } finally {
    // Closing the session also releases its lock if the run failed before unlocking.
    await client.end().catch(() => undefined);
  }
}

async function dropWhileLocked(db: Queryable, tables: readonly ExpiringTable[], stopping: AbortSignal | undefined): Promise<DroppedPartition[]> {
  const lockKey = tables.map(({ table }) => table).join(',');
  const [lock] = await queryRows<{ locked: boolean }>(db, TRY_LOCK_PARTITION_REMOVAL, [lockKey]);
  if (!lock!.locked) return [];
  try {
    const dropped: DroppedPartition[] = [];
    const step = pacedSteps(PAUSE_BETWEEN_STEPS_MS, stopping);
    for (const expiring of tables) dropped.push(...(await dropExpired(db, expiring, step)));
    return dropped;
  } finally {
    await db.query(UNLOCK_PARTITION_REMOVAL, [lockKey]);
  }
}

async function dropExpired(db: Queryable, { table, retainedSeconds }: ExpiringTable, step: () => Promise<void>): Promise<DroppedPartition[]> {
  const dropped: DroppedPartition[] = [];
  const expired = await queryRows<{ name: string; state: RemovalState }>(db, EXPIRED_DAILY_PARTITIONS, [table, retainedSeconds, partitionNamePattern(table).source]);
  for (const { name, state } of expired) {
    await step();
    if (!(await detach(db, table, name, state))) continue;
    await step();
    const [row] = await queryRows<{ rows: string | null }>(db, DROP_DETACHED_DAILY_PARTITION, [table, name]);
    if (row?.rows != null) dropped.push({ table, name, rows: Number(row.rows) });
  }
  return dropped;
}

/**
 * Resolves at once the first time, then `pauseMs` later each time: steps taken apart. Rejects once
 * `stopping` is aborted: a shutdown stops the purge between two steps, and the next run finishes it.
 */
function pacedSteps(pauseMs: number, stopping: AbortSignal | undefined): () => Promise<void> {
  let first = true;
  return async () => {
    stopping?.throwIfAborted();
    if (first) first = false;
    else await delay(pauseMs, undefined, { signal: stopping });
  };
}

/** False when another session is detaching it or has already: that one drops it. */
async function detach(db: Queryable, table: DailyPartitionedTable, name: string, state: RemovalState): Promise<boolean> {
  if (state === 'detached') return true;
  try {
    await db.query(state === 'attached' ? detachDailyPartition(table, name) : finalizeDailyPartitionDetach(table, name));
    return true;
  } catch (error) {
    if (isDetachedElsewhere(error)) return false;
    throw error;
  }
}

// 42P01: no longer a partition (detached meanwhile); 55000: another session's detach of it is pending.
function isDetachedElsewhere(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code === SQLSTATE.undefinedTable || code === SQLSTATE.objectNotInPrerequisiteState;
}
