import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateIdempotencyKeys1764700000000 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        scope            text        NOT NULL CHECK (char_length(scope) BETWEEN 1 AND 255),
        key              text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
        request_hash     char(64)    NOT NULL,
        status           text        NOT NULL CHECK (status IN ('in_flight', 'released', 'completed')),
        operation_id     uuid        NOT NULL,
        lock_token       uuid,
        locked_at        timestamptz,
        response_status  smallint,
        response_headers jsonb,
        response_body    text,
        created_at       timestamptz NOT NULL DEFAULT now(),
        expires_at       timestamptz NOT NULL,
        PRIMARY KEY (scope, key),
        -- An in-flight claim always has an owner, a released one none, a completed one its answer.
        CONSTRAINT idempotency_keys_state_shape CHECK (
          (status = 'in_flight' AND lock_token IS NOT NULL AND locked_at IS NOT NULL AND response_status IS NULL)
          OR (status = 'released' AND lock_token IS NULL AND response_status IS NULL)
          OR (status = 'completed' AND lock_token IS NULL AND response_status IS NOT NULL AND response_body IS NOT NULL)
        )
      )`);
    // The purge deletes by expiry; without this index each batch would scan the table.
    await queryRunner.query(`CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE idempotency_keys`);
  }
}
