import { describe, expect, it } from '@jest/globals';
import { describeDatabase } from '../../src/database/database-description.js';
import type { RunningPostgres } from '../../src/database/embedded-postgres.js';

/** The start-up line naming the database (pure: no database, no process). */
describe('describeDatabase', () => {
  const embedded = (fields: Pick<RunningPostgres, 'origin'> & Partial<RunningPostgres>): RunningPostgres => ({
    url: 'postgres://postgres:postgres@127.0.0.1:54329/pagos',
    port: 54329,
    dataDir: '/srv/pagos/.data/pg',
    postmasterPid: 200,
    stop: async () => undefined,
    ...fields,
  });

  it('DATABASE_URL: host, port and database, never the user or the password', () => {
    const line = describeDatabase('postgres://app:s3cret@db.internal:6432/pagos?sslmode=require', undefined);
    expect(line).toBe('database: db.internal:6432/pagos (DATABASE_URL)');
    expect(describeDatabase('postgres://app:s3cret@db.internal/pagos', undefined)).toBe('database: db.internal:5432/pagos (DATABASE_URL)');
  });

  it('the embedded PostgreSQL: its port and folder, and how this process came to it', () => {
    expect(describeDatabase(undefined, embedded({ origin: 'started' }))).toBe('database: embedded PostgreSQL started on port 54329, data in /srv/pagos/.data/pg');
    expect(describeDatabase(undefined, embedded({ origin: 'adopted', ownerPid: 100 }))).toBe(
      'database: embedded PostgreSQL adopted on port 54329, data in /srv/pagos/.data/pg: PID 200, left running by process 100, which is gone; it stops with this one now',
    );
    expect(describeDatabase(undefined, embedded({ origin: 'adopted' }))).toContain('left running by a process, which is gone');
    expect(describeDatabase(undefined, embedded({ origin: 'shared', ownerPid: 100 }))).toBe(
      'database: embedded PostgreSQL shared on port 54329, data in /srv/pagos/.data/pg: PID 200, run by process 100, which keeps it running when this one stops',
    );
  });
});
