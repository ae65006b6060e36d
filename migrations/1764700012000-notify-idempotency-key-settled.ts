import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Announces on channel `idempotency_key_settled` every key whose status becomes `completed` or
 * `released`, so that duplicates waiting for its answer (`Prefer: wait`) wake up. A trigger rather
 * than a NOTIFY beside each statement: every path that settles a key (request, job, operator)
 * notifies, and PostgreSQL delivers the notification only when that transaction commits.
 * Payload: the JSON array `[scope, key]`; both are at most 255 characters, so even fully escaped
 * (6 bytes a character) it stays under NOTIFY's 8000-byte limit.
 * Since migration 1764700013000 the trigger fires only for keys a duplicate waits on (`has_waiters`).
 */
export class NotifyIdempotencyKeySettled1764700012000 implements MigrationInterface {
  name = 'NotifyIdempotencyKeySettled1764700012000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION idempotency_key_settled_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('idempotency_key_settled', json_build_array(NEW.scope, NEW.key)::text);
        RETURN NULL;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER idempotency_key_settled
        AFTER UPDATE ON idempotency_keys
        FOR EACH ROW
        WHEN (NEW.status IN ('completed', 'released') AND OLD.status IS DISTINCT FROM NEW.status)
        EXECUTE FUNCTION idempotency_key_settled_notify()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER idempotency_key_settled ON idempotency_keys`);
    await queryRunner.query(`DROP FUNCTION idempotency_key_settled_notify()`);
  }
}
