import { DataSource } from 'typeorm';
import { ConfigError, loadConfig, readEnvironment } from '../config/app-config.js';
import { dataSourceOptions } from './data-source-options.js';
import { describeDatabase } from './database-description.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { revertLastMigration, runMigrationsExclusively } from './migrations.js';

/** `npm run migration:run` / `migration:revert`: the same migrations the service applies at start. */
async function main(command: string | undefined): Promise<void> {
  if (command !== 'run' && command !== 'revert') throw new ConfigError('usage: migrate.js run|revert');
  const config = loadConfig(readEnvironment());
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ ...config.embeddedPg, persistent: true });
  const url = config.databaseUrl ?? embedded!.url;
  if (embedded) console.log(describeDatabase(undefined, embedded));
  const dataSource = await new DataSource(dataSourceOptions({ url, poolSize: 2 })).initialize();
  try {
    if (command === 'run') {
      const applied = await runMigrationsExclusively(dataSource);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'no pending migrations');
    } else {
      await revertLastMigration(dataSource);
      console.log('reverted the last migration');
    }
  } finally {
    await dataSource.destroy();
    await embedded?.stop();
  }
}

main(process.argv[2]).catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
