/**
 * Statements of the outbox (table `eventos`, migration 1764700017000). An event is written once, in
 * the transaction of the change it announces, and never updated: its id and its bytes never change.
 * The table is partitioned by UTC day of `created_at` (migration 1764700030500): a lookup by id probes
 * each day's primary key index (id, created_at), the feed merges each day's (client_id, txid, seq).
 * Expired days are dropped whole (eventos-purge.job.ts), not deleted.
 */

/**
 * Records event $1 of client $2, type $3, whose delivered body is $4. Run on the transaction of the
 * state change: it commits or rolls back with it. `txid` and `seq` come from their defaults.
 */
export const INSERT_EVENT = `
  INSERT INTO eventos (id, client_id, type, payload) VALUES ($1::text, $2::text, $3::text, $4::json)`;

/** Event $1 of client $2 (an unknown id and another client's are the same: no row). */
export const EVENT_BY_ID = `
  SELECT payload::text AS payload FROM eventos WHERE id = $1::text AND client_id = $2::text`;

/** Where event $1 of client $2 stands in the feed's order (the cursor of `desde`). */
export const EVENT_POSITION = `
  SELECT txid::text AS txid, seq::text AS seq FROM eventos WHERE id = $1::text AND client_id = $2::text`;

/**
 * The feed: client $1's events in (txid, seq) order, $2 at most, only from transactions older than
 * every transaction still running (`pg_snapshot_xmin` of this statement's snapshot). Race it
 * prevents: transaction A inserts seq 10, B inserts seq 11 and commits first; listing seq 11 would
 * let a cursor pass seq 10 for ever. Any row that becomes visible later belongs to a transaction
 * whose id is at least that xmin, so it sorts after everything listed now: no gaps, no repeats.
 * The price: the feed lags the oldest running transaction of the cluster (normally milliseconds).
 */
export const FEED_FROM_START = `
  SELECT payload::text AS payload FROM eventos
   WHERE client_id = $1::text AND txid < pg_snapshot_xmin(pg_current_snapshot())
   ORDER BY txid, seq
   LIMIT $2::int`;

/** As FEED_FROM_START, after the position ($3 txid, $4 seq) of the cursor's event. */
export const FEED_AFTER = `
  SELECT payload::text AS payload FROM eventos
   WHERE client_id = $1::text AND txid < pg_snapshot_xmin(pg_current_snapshot()) AND (txid, seq) > ($3::xid8, $4::bigint)
   ORDER BY txid, seq
   LIMIT $2::int`;
