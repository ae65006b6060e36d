import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Events are fanned out by a relay that reads the outbox (src/webhooks/outbox-relay.ts), no longer
 * by a pg-boss job enqueued in each event's transaction: `fanned_out_at` is null until the relay has
 * created the event's deliveries. Events written before this migration were fanned out by their
 * jobs (`-infinity`, a constant default: no table rewrite), except those whose job had not run yet,
 * which go back to the relay; their jobs are deleted (the relay's fan-out inserts nothing twice).
 */
export class OutboxRelay1764700025000 implements MigrationInterface {
  name = 'OutboxRelay1764700025000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE eventos ADD COLUMN fanned_out_at timestamptz DEFAULT '-infinity'`);
    await queryRunner.query(`ALTER TABLE eventos ALTER COLUMN fanned_out_at DROP DEFAULT`);
    await queryRunner.query(`
      WITH pending AS (
        DELETE FROM pgboss.job WHERE name = 'webhook-fan-out' AND state IN ('created', 'retry', 'active')
        RETURNING data->>'eventId' AS event_id
      )
      UPDATE eventos SET fanned_out_at = NULL WHERE id IN (SELECT event_id FROM pending)`);
    // What the relay looks for, and nothing else: a small partial index however long the table.
    await queryRunner.query(`CREATE INDEX eventos_not_fanned_out ON eventos (created_at) WHERE fanned_out_at IS NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX eventos_not_fanned_out`);
    await queryRunner.query(`ALTER TABLE eventos DROP COLUMN fanned_out_at`);
  }
}
