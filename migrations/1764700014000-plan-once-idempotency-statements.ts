import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The claim and the completion of a key, the two statements every first request sends (and the claim
 * every replay), as PL/pgSQL functions: PL/pgSQL plans a statement once per connection and keeps the
 * plan, where a statement sent as text is parsed and planned on every call. Measured on PostgreSQL 15,
 * server CPU per call: claim 0.49 → 0.21 ms, replay 0.28 → 0.07 ms. A named prepared statement
 * would save the same, but PgBouncer's transaction mode (before 1.21) can't carry one; a function is
 * plain SQL to a pooler.
 * Each body is the statement `idempotency.sql.ts` documented before, one statement as before: a
 * VOLATILE function takes a new snapshot for each statement, so under READ COMMITTED the races play
 * out exactly as they did (see CLAIM_KEY and COMPLETE_KEY there).
 */
export class PlanOnceIdempotencyStatements1764700014000 implements MigrationInterface {
  name = 'PlanOnceIdempotencyStatements1764700014000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Columns win over the OUT parameters of the same name (status): the body reads the table.
    await queryRunner.query(`
      CREATE FUNCTION idempotency_claim_key(
        p_scope text, p_key text, p_lock_timeout_seconds int, p_lock_token uuid, p_request_hash text, p_operation_id uuid, p_ttl_seconds int
      ) RETURNS TABLE (
        claimed boolean, "operationId" uuid, "replacedExpired" boolean, "requestHash" text, status text,
        "responseStatus" smallint, "responseHeaders" jsonb, "responseBody" text, "leaseExpired" boolean
      ) LANGUAGE plpgsql VOLATILE AS $$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        WITH live AS (
          SELECT request_hash::text AS "requestHash", status, operation_id AS "operationId",
                 response_status AS "responseStatus", response_headers AS "responseHeaders", response_body AS "responseBody",
                 (locked_at <= now() - make_interval(secs => p_lock_timeout_seconds)) AS "leaseExpired"
            FROM idempotency_keys
           WHERE scope = p_scope AND key = p_key AND expires_at > now()
        ), claimed AS (
          INSERT INTO idempotency_keys AS k (scope, key, request_hash, status, operation_id, lock_token, locked_at, created_at, expires_at)
          SELECT p_scope, p_key, p_request_hash::char(64), 'in_flight', p_operation_id, p_lock_token, now(), now(), now() + make_interval(secs => p_ttl_seconds)
           WHERE NOT EXISTS (SELECT 1 FROM live)
          ON CONFLICT (scope, key) DO UPDATE
             SET request_hash = EXCLUDED.request_hash, status = 'in_flight', operation_id = EXCLUDED.operation_id,
                 lock_token = EXCLUDED.lock_token, locked_at = now(), created_at = now(), expires_at = EXCLUDED.expires_at,
                 response_status = NULL, response_headers = NULL, response_body = NULL
           WHERE k.expires_at <= now()
          RETURNING k.operation_id, (k.xmax <> 0) AS replaced_expired
        )
        SELECT true, c.operation_id, c.replaced_expired, NULL::text, NULL::text, NULL::smallint, NULL::jsonb, NULL::text, NULL::boolean
          FROM claimed c
        UNION ALL
        SELECT false, l."operationId", NULL::boolean, l."requestHash", l.status, l."responseStatus", l."responseHeaders", l."responseBody", l."leaseExpired"
          FROM live l;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION idempotency_complete_key(
        p_scope text, p_key text, p_lock_token uuid, p_status smallint, p_headers jsonb, p_body text
      ) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        UPDATE idempotency_keys
           SET status = 'completed', lock_token = NULL, locked_at = NULL,
               response_status = p_status, response_headers = p_headers, response_body = p_body
         WHERE scope = p_scope AND key = p_key AND lock_token = p_lock_token AND status = 'in_flight';
        IF NOT FOUND THEN
          RETURN idempotency_claim_lost();
        END IF;
        RETURN true;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION idempotency_complete_key(text, text, uuid, smallint, jsonb, text)`);
    await queryRunner.query(`DROP FUNCTION idempotency_claim_key(text, text, int, uuid, text, uuid, int)`);
  }
}
