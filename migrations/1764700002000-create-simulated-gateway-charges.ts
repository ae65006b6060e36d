import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The simulated gateway's own ledger; a real processor keeps this on its side. */
export class CreateSimulatedGatewayCharges1764700002000 implements MigrationInterface {
  name = 'CreateSimulatedGatewayCharges1764700002000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE simulated_gateway_charges (
        charge_key  text        PRIMARY KEY,
        id          uuid        NOT NULL UNIQUE,
        amount      bigint      NOT NULL CHECK (amount > 0),
        currency    char(3)     NOT NULL,
        outcome     text        NOT NULL CHECK (outcome IN ('approved', 'declined')),
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE simulated_gateway_charges`);
  }
}
