import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A refund's processor id is now how it is found again: the refund webhooks name only that
 * (`re_…`), and a refund the processor left `pending` is recorded PENDIENTE with it (the route's
 * 202). One processor refund is one of ours at most: unique where set.
 */
export class ReembolsosGatewayRefundId1764700023000 implements MigrationInterface {
  name = 'ReembolsosGatewayRefundId1764700023000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE UNIQUE INDEX reembolsos_gateway_refund_id_uidx ON reembolsos (gateway_refund_id) WHERE gateway_refund_id IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX reembolsos_gateway_refund_id_uidx`);
  }
}
