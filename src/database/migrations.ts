import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource, QueryRunner } from 'typeorm';

// Any constant works; it only has to be the same in every process that migrates this database.
export const MIGRATION_LOCK_ID = 7_246_001;

/**
 * Applies pending migrations while holding a session advisory lock, so that replicas starting at the
 * same moment run them once, one after another, instead of racing on CREATE TABLE.
 */
export async function runMigrationsExclusively(dataSource: DataSource): Promise<string[]> {
  return withMigrationLock(dataSource, async () => {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  });
}

export async function revertLastMigration(dataSource: DataSource): Promise<void> {
  await withMigrationLock(dataSource, () => dataSource.undoLastMigration({ transaction: 'each' }));
}

async function withMigrationLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const lockHolder = dataSource.createQueryRunner();
  await lockHolder.connect();
  try {
    await acquireMigrationLock(lockHolder);
    try {
      return await work();
    } finally {
      await lockHolder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
  } finally {
    await lockHolder.release();
  }
}

// How often a replica waiting for another's migrations asks for the lock again.
const LOCK_POLL_MS = 100;

/**
 * Polls pg_try_advisory_lock rather than blocking in pg_advisory_lock: a statement blocked on a lock
 * keeps its snapshot, and CREATE INDEX CONCURRENTLY (migration 1764700028000) waits for every older
 * snapshot in the database, so the migrating replica would wait for the waiting one, which waits for
 * it: both forever. Between polls the waiting replica holds no snapshot.
 */
async function acquireMigrationLock(lockHolder: QueryRunner): Promise<void> {
  for (;;) {
    const [row] = (await lockHolder.query('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK_ID])) as Array<{ locked: boolean }>;
    if (row?.locked) return;
    await sleep(LOCK_POLL_MS);
  }
}
