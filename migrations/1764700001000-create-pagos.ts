import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreatePagos1764700001000 implements MigrationInterface {
  name = 'CreatePagos1764700001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE pagos (
        id               uuid        PRIMARY KEY,
        client_id        text        NOT NULL,
        operation_id     text        NOT NULL UNIQUE,
        numero_orden     text        NOT NULL CHECK (numero_orden ~ '^[A-Za-z0-9._-]{1,64}$'),
        monto            bigint      NOT NULL CHECK (monto > 0 AND monto <= 1000000000000),
        moneda           char(3)     NOT NULL CHECK (moneda ~ '^[A-Z]{3}$'),
        estado           text        NOT NULL CHECK (estado IN ('PENDIENTE', 'APROBADO', 'RECHAZADO', 'FALLIDO')),
        gateway_charge_id text,
        creado_en        timestamptz NOT NULL DEFAULT now(),
        actualizado_en   timestamptz NOT NULL DEFAULT now()
      )`);
    // An order holds at most one payment that is approved or may still become approved.
    await queryRunner.query(`
      CREATE UNIQUE INDEX pagos_orden_activa_uidx ON pagos (client_id, numero_orden)
      WHERE estado IN ('PENDIENTE', 'APROBADO')`);
    await queryRunner.query(`CREATE INDEX pagos_client_orden_idx ON pagos (client_id, numero_orden, creado_en)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE pagos`);
  }
}
