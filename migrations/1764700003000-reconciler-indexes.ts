import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What the reconciler looks up: a stale operation's claim by its id, and the payments still PENDIENTE. */
export class ReconcilerIndexes1764700003000 implements MigrationInterface {
  name = 'ReconcilerIndexes1764700003000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // One claim per operation (ids are random UUIDs): taking over "the claim of operation X" touches one row.
    await queryRunner.query(`CREATE UNIQUE INDEX idempotency_keys_operation_id_uidx ON idempotency_keys (operation_id)`);
    // PENDIENTE rows are few at any time; the reconciler walks them by id and the gauge counts them.
    await queryRunner.query(`CREATE INDEX pagos_pendientes_idx ON pagos (id) WHERE estado = 'PENDIENTE'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX pagos_pendientes_idx`);
    await queryRunner.query(`DROP INDEX idempotency_keys_operation_id_uidx`);
  }
}
