import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Refunds of approved payments. The sum rule lives on the payment: `monto_reservado_reembolsos` is
 * what PENDIENTE and APROBADO refunds hold, `monto_reembolsado` what APROBADO ones gave back; the
 * CHECKs make "refunds never exceed the payment" a property of the table, whatever the code does.
 * Also the simulated processor's refund ledger (a real processor keeps it on its side).
 */
export class CreateReembolsos1764700004000 implements MigrationInterface {
  name = 'CreateReembolsos1764700004000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE pagos
        ADD COLUMN monto_reservado_reembolsos bigint NOT NULL DEFAULT 0,
        ADD COLUMN monto_reembolsado bigint NOT NULL DEFAULT 0,
        ADD CONSTRAINT pagos_reembolsos_dentro_del_monto
          CHECK (0 <= monto_reembolsado AND monto_reembolsado <= monto_reservado_reembolsos AND monto_reservado_reembolsos <= monto)`);
    await queryRunner.query(`
      CREATE TABLE reembolsos (
        id                uuid        PRIMARY KEY,
        pago_id           uuid        NOT NULL REFERENCES pagos (id),
        client_id         text        NOT NULL,
        operation_id      text        NOT NULL UNIQUE,
        monto             bigint      NOT NULL CHECK (monto > 0 AND monto <= 1000000000000),
        moneda            char(3)     NOT NULL CHECK (moneda ~ '^[A-Z]{3}$'),
        motivo            text        CHECK (char_length(motivo) <= 200),
        estado            text        NOT NULL CHECK (estado IN ('PENDIENTE', 'APROBADO', 'FALLIDO')),
        -- The payment's charge at the processor, copied when the refund starts (an APROBADO payment's never changes).
        gateway_charge_id text        NOT NULL,
        gateway_refund_id text,
        creado_en         timestamptz NOT NULL DEFAULT now(),
        actualizado_en    timestamptz NOT NULL DEFAULT now()
      )`);
    // A payment's refunds are listed in creation order; PENDIENTE ones are few and walked by the reconciler.
    await queryRunner.query(`CREATE INDEX reembolsos_pago_idx ON reembolsos (pago_id, creado_en)`);
    await queryRunner.query(`CREATE INDEX reembolsos_pendientes_idx ON reembolsos (id) WHERE estado = 'PENDIENTE'`);

    // The simulator's ledger: refunds per key, and per charge never more than it charged (the CHECK).
    await queryRunner.query(`ALTER TABLE simulated_gateway_charges ADD COLUMN refunded bigint NOT NULL DEFAULT 0 CHECK (refunded <= amount)`);
    await queryRunner.query(`
      CREATE TABLE simulated_gateway_refunds (
        refund_key  text        PRIMARY KEY,
        id          uuid        NOT NULL UNIQUE,
        charge_id   uuid        NOT NULL REFERENCES simulated_gateway_charges (id),
        amount      bigint      NOT NULL CHECK (amount > 0),
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE simulated_gateway_refunds`);
    await queryRunner.query(`ALTER TABLE simulated_gateway_charges DROP COLUMN refunded`);
    await queryRunner.query(`DROP TABLE reembolsos`);
    await queryRunner.query(`
      ALTER TABLE pagos DROP CONSTRAINT pagos_reembolsos_dentro_del_monto, DROP COLUMN monto_reembolsado, DROP COLUMN monto_reservado_reembolsos`);
  }
}
