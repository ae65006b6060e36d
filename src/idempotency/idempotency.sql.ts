/**
 * Every state transition of an idempotency key, one statement each: the state machine.
 *
 *            claimKey                completeKey
 *   (none) ───────────► in_flight ───────────────► completed ──► (expired: dropped with its day's partition)
 *                        ▲     │ releaseKey (owner), releaseAbandonedKey (operator)
 *          takeOverKey   │     ▼
 *   (stale in_flight) ───┴── released
 *        takeOverStaleOperation (a settling job: the same takeover, found by operation id)
 *
 *   in_flight ──markKeyWaited──► in_flight with has_waiters: a duplicate waits on it. Only such a key
 *   becomes completed or released with a notification on `idempotency_key_settled` (a trigger, see
 *   migrations 1764700012000 and 1764700013000), whichever of the statements above settles it.
 *
 * Each WHERE states the precondition and each RETURNING tells the caller whether it won. Under
 * READ COMMITTED a second writer of the same row waits for the first and re-checks the WHERE on the
 * committed row, so of N racing callers exactly one sees a row come back. `now()` of PostgreSQL is
 * the only clock. Parameters are always bound, with casts.
 *
 * The table is partitioned by expiry day (migration 1764700028500; partitions: key-partitions.ts), so
 * (scope, key) is not a unique key: a key has at most one live row (claimKey sees to it) and any number
 * of expired ones waiting for their day's partition to be dropped. Every statement therefore states
 * `expires_at > now()`: an expired row is never read as the key, nor written.
 */

/** Columns of a key as the store reads them. */
const KEY_COLUMNS = `
  request_hash::text AS "requestHash", status, operation_id AS "operationId",
  response_status AS "responseStatus", response_headers AS "responseHeaders", response_body AS "responseBody",
  (locked_at <= now() - make_interval(secs => $3::int)) AS "leaseExpired",
  extract(epoch FROM expires_at - clock_timestamp())::float8 AS "expiresInSeconds"`;

/**
 * (none or expired) → in_flight, owned by lock token $4; or, when the key is live, its row.
 * One round trip for both a first request and a replay: `live` reads the key; only if there is
 * none does the INSERT run.
 * Race: two first requests with one key. Each first takes a transaction-scoped advisory lock on
 * hash(scope, key); the second waits until the winner commits, then reads with a new snapshot, finds
 * the winner's live row and inserts nothing. An expired key counts as unused: the winner inserts a new
 * row (a new operation) and leaves the expired one to its partition's drop.
 * Result: `claimed = true` (this caller owns the key; `replacedExpired` when an expired row of the key
 * exists), or `claimed = false` with the live row; either way `expiresInSeconds`, the key's time left
 * as the row is read (`clock_timestamp()`: `now()` is the transaction's start, before any lock wait).
 * (Before the advisory lock a claim could also get zero rows, when the key became live after its
 * snapshot; the store still reads the key with findKey then.)
 * The statement is the body of `idempotency_claim_key_with_expiry` (migrations 1764700014000,
 * 1764700028500, 1764700031000): PL/pgSQL plans it once per connection, where its text would be planned
 * on every call (0.49 against 0.21 ms of server CPU per claim, 0.28 against 0.07 per replay).
 * A claim whose expiry day has no partition fails with SQLSTATE 23514; the store then creates the
 * partitions and claims again (see IdempotencyStore).
 * $1 scope, $2 key, $3 lock timeout seconds, $4 lock token, $5 request hash, $6 operation id, $7 ttl seconds.
 */
export const CLAIM_KEY = `
  SELECT * FROM idempotency_claim_key_with_expiry($1::text, $2::text, $3::int, $4::uuid, $5::text, $6::uuid, $7::int)`;

/**
 * Reads a live key to decide between replay, mismatch and in flight, when claimKey's snapshot
 * predates it. Not a transition.
 * Zero rows: the key vanished (expired, purged) meanwhile; claim again.
 * $1 scope, $2 key, $3 lock timeout seconds.
 */
export const FIND_KEY = `
  SELECT ${KEY_COLUMNS}
    FROM idempotency_keys
   WHERE scope = $1::text AND key = $2::text AND expires_at > now()`;

/**
 * released, or in_flight whose lease ran out → in_flight, owned by the new lock token $5.
 * Race: several retries find the same stale claim; the first UPDATE renews locked_at (or clears
 * `released`), so the others re-check the WHERE against that and get no row. A live owner that
 * renews its lease in time is never taken over. The operation id is kept: the new owner resumes
 * the same operation, which downstream deduplicates by it.
 * Zero rows: somebody else owns the claim now; answer "in flight".
 * $1 scope, $2 key, $3 lock timeout seconds, $4 request hash, $5 new lock token.
 */
export const TAKE_OVER_KEY = `
  UPDATE idempotency_keys
     SET status = 'in_flight', lock_token = $5::uuid, locked_at = now()
   WHERE scope = $1::text AND key = $2::text AND request_hash = $4::char(64) AND expires_at > now()
     AND (status = 'released' OR (status = 'in_flight' AND locked_at <= now() - make_interval(secs => $3::int)))
  RETURNING operation_id AS "operationId"`;

/**
 * in_flight → in_flight with a fresh lease, for the owner only.
 * Race: a takeover after a stall; once the token changed the old owner's renewal matches nothing.
 * Zero rows: ownership was lost; the owner's completion will fail too.
 * $1 scope, $2 key, $3 lock token.
 */
export const RENEW_KEY = `
  UPDATE idempotency_keys SET locked_at = now()
   WHERE scope = $1::text AND key = $2::text AND lock_token = $3::uuid AND status = 'in_flight' AND expires_at > now()
  RETURNING 1 AS renewed`;

/**
 * in_flight → in_flight with has_waiters, for a duplicate about to wait on the key: from now on,
 * settling the key notifies (a NOTIFY serialises commits, so keys nobody waits on send none).
 * The waiter watches the key first, then marks it, then reads it (claimKey). Race: the first
 * attempt settling the key at the same moment. The mark and the settling UPDATE lock the same row:
 * - settlement first: the mark waits for its commit and re-checks the WHERE on the settled row
 *   (READ COMMITTED), matching nothing; the read after it sees the settled key (replay, takeover).
 * - mark first: the settlement's NEW row carries has_waiters = true, so the trigger queues the
 *   notification, delivered when that transaction commits, after the watch began.
 * Once set it is never cleared while the row lives (a takeover keeps it: at worst one notification
 * nobody waits for); a new row, also the one a claim inserts over an expired key, starts without waiters.
 * Zero rows: already marked (its settlement notifies), or not in flight (settled, gone): the read
 * that follows finds out which.
 * $1 scope, $2 key.
 */
export const MARK_KEY_WAITED = `
  UPDATE idempotency_keys SET has_waiters = true
   WHERE scope = $1::text AND key = $2::text AND status = 'in_flight' AND NOT has_waiters AND expires_at > now()
  RETURNING 1 AS marked`;

/** SQLSTATE that COMPLETE_KEY raises (through `idempotency_claim_lost()`, see its migration) when it matches no row. */
export const CLAIM_LOST_SQLSTATE = 'IK001';

/**
 * in_flight → completed with the response, for the owner only; runs in the transaction of the
 * handler's last write, so the business row and the stored answer commit together.
 * Race: a stalled owner waking after a takeover cannot overwrite the new owner's answer.
 * Zero rows would leave nothing to check before the COMMIT that is pipelined behind this statement,
 * so it raises CLAIM_LOST_SQLSTATE instead: the transaction aborts and its COMMIT answers ROLLBACK.
 * The UPDATE is the body of `idempotency_complete_key` (migrations 1764700014000, 1764700028500), planned
 * once per connection like the claim's. An owner whose key expired meanwhile has lost it too: a new
 * claim may already have started another operation with the key.
 * $1 scope, $2 key, $3 lock token, $4 status code, $5 headers (json), $6 body.
 */
export const COMPLETE_KEY = `
  SELECT idempotency_complete_key($1::text, $2::text, $3::uuid, $4::smallint, $5::jsonb, $6::text) AS completed`;

/**
 * in_flight → released, for the owner only, after a failure of our own (5xx): the next retry with
 * the same request takes it over at once instead of waiting for the lease, and resumes the same
 * operation id.
 * Zero rows: ownership was already lost; nothing to do.
 * $1 scope, $2 key, $3 lock token.
 */
export const RELEASE_KEY = `
  UPDATE idempotency_keys SET status = 'released', lock_token = NULL, locked_at = NULL
   WHERE scope = $1::text AND key = $2::text AND lock_token = $3::uuid AND status = 'in_flight' AND expires_at > now()
  RETURNING 1 AS released`;

/**
 * The claim of operation $1 when its owner is gone (released, or in_flight whose lease ran out) →
 * in_flight, owned by the new lock token $3: how a job settles an operation no client came back for.
 * Keyed by the operation id, which stays the same across every retry and takeover of its key.
 * Race: two settlers (replicas), or a settler and a client's retry (takeOverKey). The UPDATE of the
 * first renews locked_at; the others re-check the WHERE against it and take nothing.
 * Result: `taken` with the key (this caller owns the claim now); `held` when a live key was there but
 * not taken (a live lease, a concurrent winner, or already completed); zero rows when the operation has
 * no live key at all (never claimed, expired, purged): nothing to fence through a key.
 * $1 operation id, $2 lock timeout seconds, $3 new lock token.
 */
export const TAKE_OVER_STALE_OPERATION = `
  WITH taken AS (
    UPDATE idempotency_keys
       SET status = 'in_flight', lock_token = $3::uuid, locked_at = now()
     WHERE operation_id = $1::uuid AND expires_at > now()
       AND (status = 'released' OR (status = 'in_flight' AND locked_at <= now() - make_interval(secs => $2::int)))
    RETURNING scope, key, request_hash::text AS "requestHash"
  )
  SELECT 'taken' AS state, scope, key, "requestHash" FROM taken
  UNION ALL
  SELECT 'held', NULL, NULL, NULL
    FROM idempotency_keys
   WHERE operation_id = $1::uuid AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM taken)`;

/**
 * in_flight whose owner is gone → released, for an operator: the next retry takes it over at once
 * instead of waiting out the lease. A live lease is released only when $4 (force) is true; its owner's
 * completion then matches no row and rolls back, and the retry resumes the same operation.
 * Race: the owner completing at the same moment. Whichever commits first wins; the other's WHERE no
 * longer matches (status or lock token changed).
 * Zero rows: no such in_flight key, or its lease is live and $4 is false.
 * $1 scope, $2 key, $3 lock timeout seconds, $4 force.
 */
export const RELEASE_ABANDONED_KEY = `
  UPDATE idempotency_keys SET status = 'released', lock_token = NULL, locked_at = NULL
   WHERE scope = $1::text AND key = $2::text AND status = 'in_flight' AND expires_at > now()
     AND ($4::boolean OR locked_at <= now() - make_interval(secs => $3::int))
  RETURNING 1 AS released`;

/**
 * One key as an operator sees it, expired or not: its live row, else its latest expired one not yet
 * dropped. Not a transition.
 * $1 scope, $2 key, $3 lock timeout seconds.
 */
export const DESCRIBE_KEY = `
  SELECT scope, key, status, operation_id AS "operationId", response_status AS "responseStatus",
         response_body AS "responseBody", created_at AS "createdAt", expires_at AS "expiresAt",
         (expires_at <= now()) AS expired,
         extract(epoch FROM now() - locked_at)::float8 AS "leaseAgeSeconds",
         (locked_at <= now() - make_interval(secs => $3::int)) AS "leaseExpired"
    FROM idempotency_keys
   WHERE scope = $1::text AND key = $2::text
   ORDER BY expires_at DESC
   LIMIT 1`;

/**
 * The claims of operations $1, for an operator's list. Not a transition.
 * $1 operation ids, $2 lock timeout seconds.
 */
export const FIND_OPERATION_CLAIMS = `
  SELECT operation_id AS "operationId", scope, key, status, expires_at AS "expiresAt",
         extract(epoch FROM now() - locked_at)::float8 AS "leaseAgeSeconds",
         (locked_at <= now() - make_interval(secs => $2::int)) AS "leaseExpired"
    FROM idempotency_keys
   WHERE operation_id = ANY($1::uuid[]) AND expires_at > now()`;
