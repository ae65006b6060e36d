import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `idempotency_claim_key_with_expiry`: the claim of migration 1764700028500, its row telling also how
 * many seconds the key has left (`expiresInSeconds`), by PostgreSQL's clock as the row is read
 * (`clock_timestamp()`; `now()` is the transaction's start, which a wait on the key's lock leaves
 * behind). A process may then keep a completed key's answer in memory to replay it again (see
 * ReplayCache) without outliving the key.
 * A new function beside the old one, not a changed one: a replica of the previous release keeps calling
 * `idempotency_claim_key` while a rolling upgrade runs, and a prepared statement of its must not see
 * that function's result type change. A later migration drops the old function.
 */
export class ClaimKeyWithExpiry1764700031000 implements MigrationInterface {
  name = 'ClaimKeyWithExpiry1764700031000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION idempotency_claim_key_with_expiry(
        p_scope text, p_key text, p_lock_timeout_seconds int, p_lock_token uuid, p_request_hash text, p_operation_id uuid, p_ttl_seconds int
      ) RETURNS TABLE (
        claimed boolean, "operationId" uuid, "replacedExpired" boolean, "requestHash" text, status text,
        "responseStatus" smallint, "responseHeaders" jsonb, "responseBody" text, "leaseExpired" boolean, "expiresInSeconds" float8
      ) LANGUAGE plpgsql VOLATILE AS $$
      #variable_conflict use_column
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(length(p_scope) || ':' || p_scope || p_key, 0));
        RETURN QUERY
        WITH live AS (
          SELECT request_hash::text AS "requestHash", status, operation_id AS "operationId",
                 response_status AS "responseStatus", response_headers AS "responseHeaders", response_body AS "responseBody",
                 (locked_at <= now() - make_interval(secs => p_lock_timeout_seconds)) AS "leaseExpired",
                 extract(epoch FROM expires_at - clock_timestamp())::float8 AS "expiresInSeconds"
            FROM idempotency_keys
           WHERE scope = p_scope AND key = p_key AND expires_at > now()
        ), claimed AS (
          INSERT INTO idempotency_keys (scope, key, request_hash, status, operation_id, lock_token, locked_at, created_at, expires_at)
          SELECT p_scope, p_key, p_request_hash::char(64), 'in_flight', p_operation_id, p_lock_token, now(), now(), now() + make_interval(secs => p_ttl_seconds)
           WHERE NOT EXISTS (SELECT 1 FROM live)
          RETURNING operation_id
        )
        SELECT true, c.operation_id,
               EXISTS (SELECT 1 FROM idempotency_keys WHERE scope = p_scope AND key = p_key AND expires_at <= now()),
               NULL::text, NULL::text, NULL::smallint, NULL::jsonb, NULL::text, NULL::boolean,
               extract(epoch FROM now() + make_interval(secs => p_ttl_seconds) - clock_timestamp())::float8
          FROM claimed c
        UNION ALL
        SELECT false, l."operationId", NULL::boolean, l."requestHash", l.status, l."responseStatus", l."responseHeaders", l."responseBody",
               l."leaseExpired", l."expiresInSeconds"
          FROM live l;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION idempotency_claim_key_with_expiry(text, text, int, uuid, text, uuid, int)`);
  }
}
