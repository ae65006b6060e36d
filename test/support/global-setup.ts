// Imports without .js: Jest loads global setup as CommonJS, outside moduleNameMapper.
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { assertDatabaseReachable } from './test-database';

/**
 * The end-to-end tests need one PostgreSQL server: `DATABASE_URL` when set (CI points it at the
 * machine's server), otherwise a throwaway embedded one for this run. Each test file then creates
 * its own database on that server.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) {
    await assertDatabaseReachable(process.env.DATABASE_URL);
    return;
  }
  const embedded = await startEmbeddedPostgres({
    dataDir: `.data/test-pg-${process.pid}`,
    port: 54000 + (process.pid % 1000),
    database: 'test',
    persistent: false,
  });
  process.env.DATABASE_URL = embedded.url;
  (globalThis as { __embeddedPostgres__?: typeof embedded }).__embeddedPostgres__ = embedded;
}
