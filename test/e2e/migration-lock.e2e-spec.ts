import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { MIGRATION_LOCK_ID, runMigrationsExclusively } from '../../src/database/migrations.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil, within } from '../support/waiting.js';

/**
 * A replica waiting for another's migrations must hold no snapshot meanwhile: CREATE INDEX CONCURRENTLY
 * (migration 1764700028000) waits for every older snapshot, so a replica blocked in pg_advisory_lock
 * would hang the migrating one for good. Real: the service's migration runner, PostgreSQL.
 */
describe('the migration lock', () => {
  let url: string;
  let migrator: pg.Client;
  let waiter: DataSource;

  beforeAll(async () => {
    url = await createTestDatabase('migration_lock');
    migrator = await connect(url);
    waiter = await new DataSource(dataSourceOptions({ url, poolSize: 2 })).initialize();
  });

  afterAll(async () => {
    await migrator?.end();
    await waiter?.destroy();
  });

  it('a replica waiting for it lets CREATE INDEX CONCURRENTLY of the migrating one finish, then migrates', async () => {
    await migrator.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    const waiting = runMigrationsExclusively(waiter);
    await waitUntil(async () => (await migrator.query(`SELECT 1 FROM pg_stat_activity WHERE query LIKE '%advisory_lock%' AND pid <> pg_backend_pid()`)).rowCount! > 0);
    await migrator.query('CREATE TABLE concurrently_indexed (a int)');
    await within(migrator.query('CREATE INDEX CONCURRENTLY concurrently_indexed_a ON concurrently_indexed (a)'), 10_000);
    await migrator.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    expect((await waiting).length).toBeGreaterThan(0);
  });
});
