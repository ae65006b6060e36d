import type pg from 'pg';
import { createDailyPartitions, type DroppedPartition, dropExpiredDailyPartitions, SECONDS_PER_DAY } from '../database/daily-partitions.js';

/**
 * The partitions of `idempotency_keys` (migration 1764700028500): one per UTC day of expiry, see
 * database/daily-partitions.ts. A partition whose upper bound is <= now() holds only expired keys (every
 * key expires before its bound, and no claim inserts a key that expires in the past), so dropping it
 * loses no live key.
 */

// Days of partitions kept ready past the TTL: a purge job that fails for a long weekend still leaves
// every claim a partition (and a claim that finds none creates them itself, see IdempotencyStore).
export const KEY_PARTITION_DAYS_AHEAD = 3;

/** Creates the partitions of the days a key claimed from now on may expire on; returns how many were new. */
export function createKeyPartitions(pool: pg.Pool, ttlSeconds: number): Promise<number> {
  return createDailyPartitions(pool, 'idempotency_keys', ttlSeconds + KEY_PARTITION_DAYS_AHEAD * SECONDS_PER_DAY);
}

/** Detaches and drops every partition wholly expired; safe beside other replicas doing the same. `sessionUrl`: see SESSION_DATABASE_URL. */
export function dropExpiredKeyPartitions(sessionUrl: string, stopping?: AbortSignal): Promise<DroppedPartition[]> {
  return dropExpiredDailyPartitions(sessionUrl, [{ table: 'idempotency_keys', retainedSeconds: 0 }], stopping);
}
