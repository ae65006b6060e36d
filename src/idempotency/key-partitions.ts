import type pg from 'pg';
import { SQLSTATE, sqlStateOf } from '../database/postgres-errors.js';
import { queryRows } from '../database/query-rows.js';
import {
  CREATE_KEY_PARTITIONS, detachKeyPartition, DROP_DETACHED_KEY_PARTITION, EXPIRED_KEY_PARTITIONS, finalizeKeyPartitionDetach,
} from './key-partitions.sql.js';

// Days of partitions kept ready past the TTL: a purge job that fails for a long weekend still leaves
// every claim a partition (and a claim that finds none creates them itself, see IdempotencyStore).
export const KEY_PARTITION_DAYS_AHEAD = 3;
const SECONDS_PER_DAY = 86_400;

/** A partition the purge dropped, and how many expired keys went with it. */
export interface DroppedKeyPartition {
  readonly name: string;
  readonly keys: number;
}

type RemovalState = 'attached' | 'detach_pending' | 'detached';

/** Creates the partitions of the days a key claimed from now on may expire on; returns how many were new. */
export async function createKeyPartitions(pool: pg.Pool, ttlSeconds: number): Promise<number> {
  const [row] = await queryRows<{ created: number }>(pool, CREATE_KEY_PARTITIONS, [ttlSeconds + KEY_PARTITION_DAYS_AHEAD * SECONDS_PER_DAY]);
  return row!.created;
}

/**
 * Detaches (CONCURRENTLY) and drops every wholly expired partition, finishing any removal a previous
 * run left halfway. Safe beside other replicas doing the same: each partition is dropped once.
 */
export async function dropExpiredKeyPartitions(pool: pg.Pool): Promise<DroppedKeyPartition[]> {
  const dropped: DroppedKeyPartition[] = [];
  for (const { name, state } of await queryRows<{ name: string; state: RemovalState }>(pool, EXPIRED_KEY_PARTITIONS, [])) {
    if (!(await detach(pool, name, state))) continue;
    const [row] = await queryRows<{ keys: string | null }>(pool, DROP_DETACHED_KEY_PARTITION, [name]);
    if (row?.keys != null) dropped.push({ name, keys: Number(row.keys) });
  }
  return dropped;
}

/** False when another replica is detaching it or has already: that replica drops it. */
async function detach(pool: pg.Pool, name: string, state: RemovalState): Promise<boolean> {
  if (state === 'detached') return true;
  try {
    await pool.query(state === 'attached' ? detachKeyPartition(name) : finalizeKeyPartitionDetach(name));
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
