import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per (event, endpoint) to deliver: what has been tried and when it was acknowledged. The
 * attempts themselves are pg-boss jobs (schema `pgboss`, created by pg-boss at start-up); this
 * table is what the operators and the metrics read, and what makes a fan-out idempotent (the
 * primary key: a fan-out run again creates no second delivery).
 */
export class CreateWebhookDeliveries1764700019000 implements MigrationInterface {
  name = 'CreateWebhookDeliveries1764700019000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        event_id         text        NOT NULL REFERENCES eventos (id) ON DELETE CASCADE,
        endpoint_id      uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        attempts         integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        last_status      integer,
        last_error       text,
        last_attempt_at  timestamptz,
        delivered_at     timestamptz,
        created_at       timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (event_id, endpoint_id)
      )`);
    await queryRunner.query(`CREATE INDEX webhook_deliveries_undelivered ON webhook_deliveries (created_at) WHERE delivered_at IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_deliveries`);
  }
}
