import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a client wants its events delivered. `secret` signs every delivery (Standard Webhooks,
 * `whsec_…`); the API shows it once. `disabled_at` is set when an endpoint failed every attempt of
 * the retry schedule: nothing more is sent to it until an operator enables it again.
 */
export class CreateWebhookEndpoints1764700018000 implements MigrationInterface {
  name = 'CreateWebhookEndpoints1764700018000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_endpoints (
        id           uuid        PRIMARY KEY,
        client_id    text        NOT NULL,
        url          text        NOT NULL CHECK (char_length(url) <= 2048),
        event_types  text[]      NOT NULL CHECK (cardinality(event_types) >= 1),
        secret       text        NOT NULL CHECK (secret LIKE 'whsec_%'),
        created_at   timestamptz NOT NULL DEFAULT now(),
        disabled_at  timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX webhook_endpoints_client ON webhook_endpoints (client_id, created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE webhook_endpoints`);
  }
}
