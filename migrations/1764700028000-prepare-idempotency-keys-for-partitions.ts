import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Bounds every expiry of the table as it is, so the next migration can attach it as a partition without scanning it. */
export const LEGACY_BOUND_CONSTRAINT = 'idempotency_keys_legacy_bound';

/**
 * Everything the next migration (1764700028500) would otherwise do under ACCESS EXCLUSIVE on the whole
 * table, done here while requests keep running: the partitioned table's two indexes, built CONCURRENTLY
 * on the table that becomes its legacy partition (ATTACH then adopts them instead of building its own),
 * and a CHECK on expires_at, validated under SHARE UPDATE EXCLUSIVE, that proves every row fits the
 * partition's bound (ATTACH then skips its scan). Measured on 1M rows: docs/operations.md.
 * The CHECK's bound is two UTC days past the latest expiry: claims made meanwhile expire a TTL after now,
 * within it unless the TTL grows by more than a day before the next migration. An empty table gets none.
 * Not in a transaction: CREATE INDEX CONCURRENTLY can't run in one. TypeORM reverts every migration in a
 * transaction, so `down` drops the indexes plainly (a brief ACCESS EXCLUSIVE).
 */
export class PrepareIdempotencyKeysForPartitions1764700028000 implements MigrationInterface {
  name = 'PrepareIdempotencyKeysForPartitions1764700028000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS idempotency_keys_legacy_scope_key_idx ON idempotency_keys (scope, key)`);
    await queryRunner.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS idempotency_keys_legacy_operation_id_idx ON idempotency_keys (operation_id)`);
    await queryRunner.query(`ALTER TABLE idempotency_keys DROP CONSTRAINT IF EXISTS ${LEGACY_BOUND_CONSTRAINT}`);
    await queryRunner.query(`
      DO $$
      DECLARE
        bound timestamptz;
      BEGIN
        SELECT (date_trunc('day', max(expires_at) AT TIME ZONE 'UTC') + interval '2 days') AT TIME ZONE 'UTC' INTO bound FROM idempotency_keys;
        IF bound IS NOT NULL THEN
          EXECUTE format('ALTER TABLE idempotency_keys ADD CONSTRAINT ${LEGACY_BOUND_CONSTRAINT} CHECK (expires_at < %L) NOT VALID', bound);
        END IF;
      END $$`);
    await queryRunner.query(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM pg_constraint WHERE conname = '${LEGACY_BOUND_CONSTRAINT}') THEN
          ALTER TABLE idempotency_keys VALIDATE CONSTRAINT ${LEGACY_BOUND_CONSTRAINT};
        END IF;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE idempotency_keys DROP CONSTRAINT IF EXISTS ${LEGACY_BOUND_CONSTRAINT}`);
    await queryRunner.query(`DROP INDEX IF EXISTS idempotency_keys_legacy_operation_id_idx`);
    await queryRunner.query(`DROP INDEX IF EXISTS idempotency_keys_legacy_scope_key_idx`);
  }
}
