// Imports without .js: Jest loads global setup as CommonJS, outside moduleNameMapper.
import path from 'node:path';
import type { EmbeddedPostgresOptions, RunningPostgres, startEmbeddedPostgres as StartEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { freePort } from './free-port';
import { assertDatabaseReachable } from './test-database';

// The built launcher: its sources import each other as `./x.js`, which Node's require (unlike the
// tests' moduleNameMapper) finds only in the build, made before the end-to-end tests run anyway.
const BUILT_LAUNCHER = path.resolve('dist/src/database/embedded-postgres.js');
const START_ATTEMPTS = 3;

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
  const embedded = await startOnAFreePort({ dataDir: `.data/test-pg-${process.pid}`, database: 'test', persistent: false });
  process.env.DATABASE_URL = embedded.url;
  (globalThis as { __embeddedPostgres__?: typeof embedded }).__embeddedPostgres__ = embedded;
}

/**
 * A port the OS just found free, and another if someone binds it before PostgreSQL does. A port
 * chosen by formula (CI once used 54000 + pid % 1000) lies in the ephemeral range, where any
 * outgoing connection may hold it: CI lost a whole run to `could not bind ... Address already in use`.
 */
async function startOnAFreePort(options: Omit<EmbeddedPostgresOptions, 'port'>): Promise<RunningPostgres> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEmbedded({ ...options, port: await freePort() });
    } catch (error) {
      if (attempt === START_ATTEMPTS || !/Address already in use/.test((error as Error).message)) throw error;
    }
  }
}

const startEmbedded: typeof StartEmbeddedPostgres = (options) => {
  let launcher: { startEmbeddedPostgres: typeof StartEmbeddedPostgres };
  try {
    launcher = require(BUILT_LAUNCHER);
  } catch (error) {
    throw new Error(`no DATABASE_URL, and the embedded PostgreSQL's launcher is not built (${(error as Error).message}): run npm run build first`);
  }
  return launcher.startEmbeddedPostgres(options);
};
