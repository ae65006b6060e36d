import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The processor is a real one now (Stripe's API, or the local processor that speaks it), which keeps
 * its own ledger: the simulator's tables go. `gateway_charge_id` holds the processor's PaymentIntent
 * id, recorded before the intent is confirmed. `intento_procesador` numbers our idempotency keys at
 * the processor: it moves on only when the current key can no longer do what we need (the processor
 * keeps a 5xx under a key and replays it; a canceled intent can't be confirmed again).
 */
export class ProcessorIntents1764700016000 implements MigrationInterface {
  name = 'ProcessorIntents1764700016000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE pagos ADD COLUMN intento_procesador integer NOT NULL DEFAULT 1 CHECK (intento_procesador >= 1)`);
    await queryRunner.query(`ALTER TABLE reembolsos ADD COLUMN intento_procesador integer NOT NULL DEFAULT 1 CHECK (intento_procesador >= 1)`);
    await queryRunner.query(`DROP TABLE simulated_gateway_refunds`);
    await queryRunner.query(`DROP TABLE simulated_gateway_charges`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE simulated_gateway_charges (
        charge_key  text        PRIMARY KEY,
        id          uuid        NOT NULL UNIQUE,
        amount      bigint      NOT NULL CHECK (amount > 0),
        currency    char(3)     NOT NULL,
        outcome     text        NOT NULL CHECK (outcome IN ('approved', 'declined')),
        refunded    bigint      NOT NULL DEFAULT 0 CHECK (refunded >= 0 AND refunded <= amount),
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE simulated_gateway_refunds (
        refund_key  text        PRIMARY KEY,
        id          uuid        NOT NULL UNIQUE,
        charge_id   uuid        NOT NULL REFERENCES simulated_gateway_charges (id),
        amount      bigint      NOT NULL CHECK (amount > 0),
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`ALTER TABLE reembolsos DROP COLUMN intento_procesador`);
    await queryRunner.query(`ALTER TABLE pagos DROP COLUMN intento_procesador`);
  }
}
