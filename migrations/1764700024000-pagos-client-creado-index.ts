import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GET /pagos pages a client's payments in (creado_en, id) order (PAGOS_DE_CLIENTE): without this
 * index each page read and sorted every payment of the client. With `numeroOrden` the list keeps
 * using pagos_client_orden_idx (an order has a handful of payments).
 */
export class PagosClientCreadoIndex1764700024000 implements MigrationInterface {
  name = 'PagosClientCreadoIndex1764700024000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX pagos_client_creado_idx ON pagos (client_id, creado_en, id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX pagos_client_creado_idx`);
  }
}
