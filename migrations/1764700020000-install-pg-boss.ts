import { getConstructionPlans } from 'pg-boss';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * pg-boss's schema (`pgboss`), installed by our migrations rather than by pg-boss at start-up:
 * replicas that start together on a new database would otherwise race to create it (through
 * PgBouncer in transaction mode one of them fails with 23505 on the schema's name). pg-boss
 * migrates its own schema forward from here when a newer version starts. Its plan brings its own
 * BEGIN/COMMIT; the migration's transaction replaces them.
 */
export class InstallPgBoss1764700020000 implements MigrationInterface {
  name = 'InstallPgBoss1764700020000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const plan = getConstructionPlans('pgboss').trim();
    if (!plan.startsWith('BEGIN;') || !plan.endsWith('COMMIT;')) throw new Error("pg-boss's construction plan is no longer one BEGIN … COMMIT block");
    await queryRunner.query(plan.slice('BEGIN;'.length, -'COMMIT;'.length));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP SCHEMA pgboss CASCADE`);
  }
}
