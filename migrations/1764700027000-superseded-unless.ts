import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `superseded_unless(applied, what)`: raises SQLSTATE SU001 (superseded) when `applied` is false. The
 * last step of a write queued without waiting for its answer (Transaction.send): a write that matched
 * nothing because somebody else wrote first must abort its transaction, so that the event and the
 * stored answer queued behind it roll back instead of committing a change that did not happen.
 */
export class SupersededUnless1764700027000 implements MigrationInterface {
  name = 'SupersededUnless1764700027000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION superseded_unless(applied boolean, what text) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF NOT applied THEN
          RAISE EXCEPTION '%', what USING ERRCODE = 'SU001';
        END IF;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION superseded_unless(boolean, text)`);
  }
}
