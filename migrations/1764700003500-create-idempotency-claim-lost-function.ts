import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A function that raises SQLSTATE IK001, for statements that must abort their transaction when they
 * match no row: the completion of a key is pipelined with COMMIT, so it can't be checked before the
 * COMMIT goes out; raising makes PostgreSQL answer that COMMIT with ROLLBACK instead.
 */
export class CreateIdempotencyClaimLostFunction1764700003500 implements MigrationInterface {
  name = 'CreateIdempotencyClaimLostFunction1764700003500';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION idempotency_claim_lost() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        RAISE EXCEPTION 'the claim on this idempotency key is no longer held by this lock token' USING ERRCODE = 'IK001';
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION idempotency_claim_lost()`);
  }
}
