import { once } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { isDatabaseUnavailable } from '../../src/database/postgres-errors.js';
import { serverUrl } from '../support/test-database.js';

/**
 * What the service answers 503 for, from errors real node-postgres clients raise on a real
 * connection: a database that went away mid-statement, or a statement sent after it had.
 */
describe('isDatabaseUnavailable', () => {
  const brokenClient = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: serverUrl() });
    client.on('error', () => undefined);
    await client.connect();
    const ended = once(client, 'error');
    (client as unknown as { connection: { stream: { destroy(error: Error): void } } }).connection.stream.destroy(new Error('the network went away'));
    await ended;
    return client;
  };

  it('is true for a statement sent on a client whose connection already failed (mid-failover)', async () => {
    const client = await brokenClient();
    const error = await client.query('SELECT 1').catch((caught: unknown) => caught);
    expect((error as Error).message).toBe('Client has encountered a connection error and is not queryable');
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('is true for a statement sent on a client that was closed', async () => {
    const client = new pg.Client({ connectionString: serverUrl() });
    await client.connect();
    await client.end();
    const error = await client.query('SELECT 1').catch((caught: unknown) => caught);
    expect((error as Error).message).toBe('Client was closed and is not queryable');
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('is true for a write refused as read-only (what a standby answers), false for an ordinary failed statement', async () => {
    const client = new pg.Client({ connectionString: serverUrl() });
    await client.connect();
    try {
      await client.query('BEGIN READ ONLY');
      const readOnly = await client.query('CREATE TEMP TABLE t (n int)').catch((caught: unknown) => caught);
      await client.query('ROLLBACK');
      expect(readOnly).toMatchObject({ code: '25006' });
      expect(isDatabaseUnavailable(readOnly)).toBe(true);
      const division = await client.query('SELECT 1 / 0').catch((caught: unknown) => caught);
      expect(isDatabaseUnavailable(division)).toBe(false);
    } finally {
      await client.end();
    }
  });
});
