import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { Transactions } from '../../src/database/transactions.js';
import { createTestDatabase } from '../support/test-database.js';

/** The one transaction helper, on a real pool of one connection to real PostgreSQL. */
describe('Transactions', () => {
  let dataSource: DataSource;
  let transactions: Transactions;

  beforeAll(async () => {
    // One pooled connection: every transaction and every statement after it share it.
    dataSource = await new DataSource(dataSourceOptions({ url: await createTestDatabase('transactions'), poolSize: 1 })).initialize();
    transactions = new Transactions(dataSource);
    await dataSource.query('CREATE TABLE IF NOT EXISTS written (n int)');
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  const setting = async (query: (sql: string) => Promise<Array<Record<string, string>>>, name: string) =>
    (await query(`SELECT current_setting('${name}') AS value`))[0]!.value;

  it('bounds every transaction with a lock timeout of 5 s and a statement timeout of 15 s', async () => {
    const inside = await transactions.run(async (manager) => ({
      lock: await setting((sql) => manager.query(sql), 'lock_timeout'),
      statement: await setting((sql) => manager.query(sql), 'statement_timeout'),
    }));
    expect(inside).toEqual({ lock: '5s', statement: '15s' });
  });

  it('leaves no setting behind on the pooled connection once the transaction ends', async () => {
    await transactions.run(async (manager) => manager.query('SELECT 1'));
    expect(await setting((sql) => dataSource.query(sql), 'lock_timeout')).toBe('0');
    expect(await setting((sql) => dataSource.query(sql), 'statement_timeout')).toBe('0');
  });

  it('commits the work, or rolls all of it back when it throws', async () => {
    await dataSource.query('TRUNCATE written');
    await transactions.run((manager) => manager.query('INSERT INTO written VALUES (1)'));
    await expect(
      transactions.run(async (manager) => {
        await manager.query('INSERT INTO written VALUES (2)');
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    expect(await dataSource.query('SELECT n FROM written ORDER BY n')).toEqual([{ n: 1 }]);
    expect((await dataSource.query(`SELECT count(*)::int AS open FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`))[0].open).toBe(0);
  });

  it('rolls back a transaction whose statement failed, and the connection serves the next one', async () => {
    await expect(transactions.run((manager) => manager.query('SELECT 1 / 0'))).rejects.toThrow(/division by zero/);
    expect(await transactions.run((manager) => manager.query('SELECT 2 AS two'))).toEqual([{ two: 2 }]);
  });
});
