import { createHash } from 'node:crypto';
import pg from 'pg';

const START_LOCAL_POSTGRES = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start";

export function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run the tests through jest, whose globalSetup sets it');
  return url;
}

export async function assertDatabaseReachable(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`PostgreSQL at ${redact(url)} is unreachable (${(error as Error).message}). Start it with: ${START_LOCAL_POSTGRES}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

// Two checkouts testing against one server (a CI run and a hand run) must not drop each other's databases.
const CHECKOUT = createHash('sha256').update(process.cwd()).digest('hex').slice(0, 6);

/**
 * A fresh database for one test file of this checkout, named after both. It is dropped and
 * recreated at the start of the next run rather than at the end of this one, so a failed run leaves
 * its rows to inspect.
 */
export async function createTestDatabase(name: string): Promise<string> {
  const database = `pagos_${name.replace(/[^a-z0-9]+/gi, '_').toLowerCase()}_${CHECKOUT}`;
  const admin = new pg.Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

/** A direct connection for assertions and for backdating rows (never sleep out a timeout). */
export async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
