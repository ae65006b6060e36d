import type { RunningPostgres } from './embedded-postgres.js';

/**
 * The start-up line naming the database: the embedded PostgreSQL's port and folder and how this
 * process came to use it, or DATABASE_URL's host, port and database (never its credentials).
 *
 * @example
 *   describeDatabase('postgres://app:secret@db:5432/pagos', undefined) // 'database: db:5432/pagos (DATABASE_URL)'
 */
export function describeDatabase(databaseUrl: string | undefined, embedded: RunningPostgres | undefined): string {
  if (!embedded) {
    const url = new URL(databaseUrl!);
    return `database: ${url.hostname}:${url.port || '5432'}${url.pathname} (DATABASE_URL)`;
  }
  const where = `on port ${embedded.port}, data in ${embedded.dataDir}`;
  const owner = embedded.ownerPid === undefined ? 'a process' : `process ${embedded.ownerPid}`;
  switch (embedded.origin) {
    case 'started':
      return `database: embedded PostgreSQL started ${where}`;
    case 'adopted':
      return `database: embedded PostgreSQL adopted ${where}: PID ${embedded.postmasterPid}, left running by ${owner}, which is gone; it stops with this one now`;
    case 'shared':
      return `database: embedded PostgreSQL shared ${where}: PID ${embedded.postmasterPid}, run by ${owner}, which keeps it running when this one stops`;
    default:
      return embedded.origin satisfies never;
  }
}
