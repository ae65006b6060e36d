import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The transactional outbox: one row per event, inserted in the same transaction as the state change
 * it announces (so a rolled-back change leaves none, and a committed one always has its row).
 * `payload` is the body exactly as it is delivered and listed (`json`, not `jsonb`: its bytes are
 * kept, so every delivery of an event signs the same body). `txid` is the writing transaction's id:
 * the feed orders by (txid, seq) and lists only rows whose transaction is older than every
 * transaction still running, so a row committed late can never land behind a consumer's cursor (a
 * keyset on `seq` alone would skip it: sequences are assigned at INSERT, rows appear at COMMIT).
 */
export class CreateEventos1764700017000 implements MigrationInterface {
  name = 'CreateEventos1764700017000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE eventos (
        id          text        PRIMARY KEY CHECK (char_length(id) <= 64),
        client_id   text        NOT NULL,
        type        text        NOT NULL CHECK (type ~ '^[a-z_]+\\.[a-z_]+$'),
        payload     json        NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        txid        xid8        NOT NULL DEFAULT pg_current_xact_id(),
        seq         bigint      GENERATED ALWAYS AS IDENTITY
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX eventos_feed ON eventos (client_id, txid, seq)`);
    await queryRunner.query(`CREATE INDEX eventos_created_at ON eventos (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE eventos`);
  }
}
