/**
 * Statements over tables partitioned by UTC day (RANGE on a timestamptz, one partition per day named
 * `<table>_pYYYYMMDD`, plus `<table>_legacy`: the table as it was before, covering everything up to its
 * bound). The PL/pgSQL functions they call come from migration 1764700029000. Not transitions of a row:
 * the purge jobs create days ahead and drop days gone.
 */

/** The tables partitioned by day: the only table names spliced into DDL. */
export const DAILY_PARTITIONED_TABLES = ['idempotency_keys', 'eventos', 'webhook_deliveries'] as const;
export type DailyPartitionedTable = (typeof DAILY_PARTITIONED_TABLES)[number];

/**
 * One partition per UTC day of table $1 from today to the day of now() + $2 seconds, for days no
 * partition covers. CREATE TABLE + ATTACH: SHARE UPDATE EXCLUSIVE on the parent, which no insert waits
 * for. Replicas running it at once queue on an advisory lock, and the later ones find the days made.
 */
export const CREATE_DAILY_PARTITIONS = `
  SELECT create_daily_partitions($1::text::regclass, now(), now() + make_interval(secs => $2::int)) AS created`;

/**
 * Every partition of table $1 whose whole day is older than $2 seconds ago, with how far its removal
 * got: `attached`, `detach_pending` (a DETACH ... CONCURRENTLY was interrupted), or `detached` (not
 * dropped yet). A purge that stopped anywhere in between finds its partition here and the next run
 * finishes it. $3: the pattern of the table's partition names.
 */
export const EXPIRED_DAILY_PARTITIONS = `
  SELECT name, CASE WHEN detach_pending THEN 'detach_pending' ELSE 'attached' END AS state
    FROM daily_partitions($1::text::regclass)
   WHERE upper_bound <= now() - make_interval(secs => $2::int)
  UNION ALL
  SELECT relname::text, 'detached'
    FROM pg_class
   WHERE relkind = 'r' AND NOT relispartition AND relname ~ $3::text
     AND relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = $1::text::regclass)
   ORDER BY 1`;

/** Drops partition $2 of table $1 once detached, returning about how many rows it held (see migration 1764700029000). NULL: another replica dropped it already. */
export const DROP_DETACHED_DAILY_PARTITION = `
  SELECT drop_detached_daily_partition($1::text::regclass, $2::text) AS rows`;

/**
 * Session-level: one replica at a time removes the partitions of a set of tables; the others skip
 * their turn (a try-lock: nobody queues behind a DETACH that waits for old snapshots). Released by
 * UNLOCK_PARTITION_REMOVAL, or with the session. $1: the lock's key within its class.
 */
export const TRY_LOCK_PARTITION_REMOVAL = `SELECT pg_try_advisory_lock(1764700030, hashtext($1::text)) AS locked`;
export const UNLOCK_PARTITION_REMOVAL = `SELECT pg_advisory_unlock(1764700030, hashtext($1::text)) AS unlocked`;

/**
 * Detaches an expired partition without blocking any writer: CONCURRENTLY takes SHARE UPDATE EXCLUSIVE
 * on the parent, and waits (in its own second transaction) for queries that may still see the partition.
 * It can't run in a transaction, nor beside a DEFAULT partition (the reason there is none).
 */
export function detachDailyPartition(table: DailyPartitionedTable, name: string): string {
  return `ALTER TABLE ${checkedTable(table)} DETACH PARTITION ${checkedPartitionName(table, name)} CONCURRENTLY`;
}

/** Completes a DETACH ... CONCURRENTLY that was interrupted (cancelled, or its session lost). */
export function finalizeDailyPartitionDetach(table: DailyPartitionedTable, name: string): string {
  return `ALTER TABLE ${checkedTable(table)} DETACH PARTITION ${checkedPartitionName(table, name)} FINALIZE`;
}

/** What a partition of `table` may be named: checked before any name is spliced into DDL. */
export function partitionNamePattern(table: DailyPartitionedTable): RegExp {
  return new RegExp(`^${checkedTable(table)}_(p[0-9]{8}|legacy)$`);
}

function checkedTable(table: string): DailyPartitionedTable {
  if (!(DAILY_PARTITIONED_TABLES as readonly string[]).includes(table)) throw new Error(`not a table partitioned by day: ${JSON.stringify(table)}`);
  return table as DailyPartitionedTable;
}

function checkedPartitionName(table: DailyPartitionedTable, name: string): string {
  if (!partitionNamePattern(table).test(name)) throw new Error(`not a partition of ${table}: ${JSON.stringify(name)}`);
  return name;
}
