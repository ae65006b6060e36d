/**
 * The partitions of `idempotency_keys` (migration 1764700028500): one per UTC day of expiry, named
 * `idempotency_keys_pYYYYMMDD`, plus `idempotency_keys_legacy` (the table as it was before, covering every
 * expiry up to its bound). Not transitions of a key: the purge creates days ahead and drops days gone.
 * A partition whose upper bound is <= now() holds only expired keys (every key expires before its bound,
 * and no claim inserts a key that expires in the past), so dropping it loses no live key.
 */

/** Partitions and tables this file may name in DDL: the only identifiers spliced into SQL, checked first. */
export const KEY_PARTITION_NAME = /^idempotency_keys_(p[0-9]{8}|legacy)$/;

/**
 * One partition per UTC day from today to the day of now() + $1 seconds, for days no partition covers.
 * CREATE TABLE + ATTACH: SHARE UPDATE EXCLUSIVE on the parent, which no claim waits for. Replicas
 * running it at once queue on an advisory lock, and the later ones find the days made.
 * $1 seconds ahead.
 */
export const CREATE_KEY_PARTITIONS = `
  SELECT idempotency_create_key_partitions(now(), now() + make_interval(secs => $1::int)) AS created`;

/**
 * Every partition wholly expired (upper bound <= now()), with how far its removal got: `attached`,
 * `detach_pending` (a DETACH ... CONCURRENTLY was interrupted), or `detached` (not dropped yet). A purge
 * that stopped anywhere in between finds its partition here and the next run finishes it.
 */
export const EXPIRED_KEY_PARTITIONS = `
  SELECT name, CASE WHEN detach_pending THEN 'detach_pending' ELSE 'attached' END AS state
    FROM idempotency_key_partitions()
   WHERE upper_bound <= now()
  UNION ALL
  SELECT relname::text, 'detached'
    FROM pg_class
   WHERE relkind = 'r' AND NOT relispartition AND relname ~ '^idempotency_keys_(p[0-9]{8}|legacy)$'
     AND relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'idempotency_keys'::regclass)
   ORDER BY 1`;

/**
 * Counts and drops partition $1 once detached. Zero rows (NULL): another replica dropped it already.
 * $1 partition name.
 */
export const DROP_DETACHED_KEY_PARTITION = `
  SELECT idempotency_drop_detached_key_partition($1::text) AS keys`;

/**
 * Detaches an expired partition without blocking any claim: CONCURRENTLY takes SHARE UPDATE EXCLUSIVE on
 * the parent, and waits (in its own second transaction) for queries that may still see the partition.
 * It can't run in a transaction, nor beside a DEFAULT partition (the reason there is none).
 */
export function detachKeyPartition(name: string): string {
  return `ALTER TABLE idempotency_keys DETACH PARTITION ${checkedPartitionName(name)} CONCURRENTLY`;
}

/** Completes a DETACH ... CONCURRENTLY that was interrupted (cancelled, or its session lost). */
export function finalizeKeyPartitionDetach(name: string): string {
  return `ALTER TABLE idempotency_keys DETACH PARTITION ${checkedPartitionName(name)} FINALIZE`;
}

function checkedPartitionName(name: string): string {
  if (!KEY_PARTITION_NAME.test(name)) throw new Error(`not a partition of idempotency_keys: ${JSON.stringify(name)}`);
  return name;
}
