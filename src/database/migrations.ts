import type { DataSource } from 'typeorm';

// Any constant works; it only has to be the same in every process that migrates this database.
const MIGRATION_LOCK_ID = 7_246_001;

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
    await lockHolder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      return await work();
    } finally {
      await lockHolder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
  } finally {
    await lockHolder.release();
  }
}
