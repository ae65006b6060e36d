import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { GateClosedError } from '../../src/database/gated-write.js';
import { SQLSTATE, sqlStateOf } from '../../src/database/postgres-errors.js';
import { pgPoolOf, type Queryable } from '../../src/database/query-rows.js';
import { Transactions } from '../../src/database/transactions.js';
import { createTestDatabase } from '../support/test-database.js';

/** The one transaction helper, on a real pool of one connection to real PostgreSQL. */
describe('Transactions', () => {
  let dataSource: DataSource;
  let transactions: Transactions;
  let url: string;

  beforeAll(async () => {
    url = await createTestDatabase('transactions');
    // One pooled connection: every transaction and every statement after it share it.
    dataSource = await new DataSource(dataSourceOptions({ url, poolSize: 1 })).initialize();
    transactions = new Transactions(dataSource);
    await dataSource.query('CREATE TABLE IF NOT EXISTS written (n int)');
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  const rows = async (db: Queryable, sql: string) => (await db.query(sql)).rows;
  const setting = async (query: (sql: string) => Promise<Array<Record<string, string>>>, name: string) =>
    (await query(`SELECT current_setting('${name}') AS value`))[0]!.value;

  it('bounds every transaction with a lock timeout of 5 s and a statement timeout of 15 s', async () => {
    const inside = await transactions.run(async (db) => ({
      lock: await setting((sql) => rows(db, sql), 'lock_timeout'),
      statement: await setting((sql) => rows(db, sql), 'statement_timeout'),
    }));
    expect(inside).toEqual({ lock: '5s', statement: '15s' });
  });

  it('leaves no setting behind on the pooled connection once the transaction ends', async () => {
    await transactions.run((db) => db.query('SELECT 1'));
    expect(await setting((sql) => dataSource.query(sql), 'lock_timeout')).toBe('0');
    expect(await setting((sql) => dataSource.query(sql), 'statement_timeout')).toBe('0');
  });

  it('runs a first write alone, bounded by a lock timeout of 5 s (a statement timeout it cannot set), and leaves no setting behind', async () => {
    const inside = await transactions.runFirst(
      async (db) => (await rows(db, `SELECT current_setting('lock_timeout') AS lock, current_setting('statement_timeout') AS statement`))[0],
      undefined,
    );
    expect(inside).toEqual({ lock: '5s', statement: '0' });
    expect(await setting((sql) => dataSource.query(sql), 'lock_timeout')).toBe('0');
  });

  it('a first write, its gate included, gives up on a lock held elsewhere after its lock timeout, and leaves nothing', async () => {
    await dataSource.query('TRUNCATE written');
    await dataSource.query(`CREATE OR REPLACE FUNCTION write_n(p int) RETURNS TABLE (n int) LANGUAGE sql VOLATILE AS $$ INSERT INTO written VALUES (p) RETURNING n $$`);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE written IN ACCESS EXCLUSIVE MODE');
      const commit = transactions.openDeferredCommit();
      // The gate's own function takes the lock: the bound must be in force before the gate runs.
      commit.startWith({ text: 'SELECT true AS open, (SELECT n FROM write_n(100)) AS mark', values: [], opensOn: 'open' });
      const refused = await transactions.runFirst((db) => db.query('SELECT * FROM write_n($1::int)', [1]), commit).catch((error: unknown) => error);
      expect(sqlStateOf(refused)).toBe(SQLSTATE.lockNotAvailable);
      expect(await commit.gatePassed).toBe(false);
      await expect(transactions.runFirst((db) => db.query('SELECT * FROM write_n($1::int)', [2]), undefined)).rejects.toMatchObject({ code: SQLSTATE.lockNotAvailable });
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(await dataSource.query('SELECT n FROM written')).toEqual([]);
  }, 30_000);

  it('commits the work, or rolls all of it back when it throws', async () => {
    await dataSource.query('TRUNCATE written');
    await transactions.run((db) => db.query('INSERT INTO written VALUES (1)'));
    await expect(
      transactions.run(async (db) => {
        await db.query('INSERT INTO written VALUES (2)');
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    expect(await dataSource.query('SELECT n FROM written ORDER BY n')).toEqual([{ n: 1 }]);
    expect((await dataSource.query(`SELECT count(*)::int AS open FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`))[0].open).toBe(0);
  });

  it('discards a connection whose server refused a write as read-only (a standby reached mid-failover): the next transaction gets a new one', async () => {
    const backend = async (db: Queryable) => (await rows(db, 'SELECT pg_backend_pid() AS pid'))[0]!.pid as number;
    const before = await transactions.run(backend);
    // What a standby answers to any write: SQLSTATE 25006.
    await expect(transactions.run(async (db) => {
      await db.query('SET TRANSACTION READ ONLY');
      await db.query('INSERT INTO written VALUES (3)');
    })).rejects.toMatchObject({ code: '25006' });
    expect(await transactions.run(backend)).not.toBe(before);
  });

  it('rolls back a transaction whose statement failed, and the connection serves the next one', async () => {
    await expect(transactions.run((db) => db.query('SELECT 1 / 0'))).rejects.toThrow(/division by zero/);
    expect(await transactions.run((db) => rows(db, 'SELECT 2 AS two'))).toEqual([{ two: 2 }]);
  });

  it('runs every pooled connection in pipeline mode', async () => {
    const client = await pgPoolOf(dataSource).connect();
    try {
      expect((client as unknown as { pipeline: boolean }).pipeline).toBe(true);
    } finally {
      client.release();
    }
  });

  /** Counts the writes the pool's one connection makes to its socket while `work` runs. */
  async function socketWritesDuring(work: () => Promise<unknown>): Promise<number> {
    const client = await pgPoolOf(dataSource).connect();
    const socket = (client as unknown as pg.Client).connection.stream as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
    client.release();
    let writes = 0;
    const original = { _write: socket._write, _writev: socket._writev };
    for (const name of ['_write', '_writev'] as const) {
      socket[name] = function (this: unknown, ...args: unknown[]) {
        writes++;
        return original[name]!.apply(this, args);
      };
    }
    try {
      await work();
      return writes;
    } finally {
      Object.assign(socket, original);
    }
  }

  it('sends BEGIN in one write with the first statement, and COMMIT in one write with the last', async () => {
    await dataSource.query('TRUNCATE written');
    const writes = await socketWritesDuring(async () => {
      const commit = transactions.openDeferredCommit();
      await transactions.runJoinable((db) => db.query('INSERT INTO written VALUES ($1)', [1]), commit);
      await commit.commitWith((db) => db.query('INSERT INTO written VALUES ($1)', [2]));
    });
    expect(writes).toBe(2);
    expect(await dataSource.query('SELECT n FROM written ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('a transaction whose work sends nothing for a while still begins, and commits', async () => {
    await dataSource.query('TRUNCATE written');
    await transactions.run(async (db) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await db.query('INSERT INTO written VALUES (1)');
    });
    const commit = transactions.openDeferredCommit();
    await transactions.runJoinable(() => new Promise((resolve) => setTimeout(resolve, 50)), commit);
    await commit.commitWith((db) => db.query('INSERT INTO written VALUES (2)'));
    expect(await dataSource.query('SELECT n FROM written ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('does not commit a work that swallowed a failed statement: the COMMIT answered ROLLBACK, and rejects with the failed statement error', async () => {
    await dataSource.query('TRUNCATE written');
    const work = transactions.run(async (db) => {
      await db.query('INSERT INTO written VALUES (1)');
      await db.query('SELECT 1 / 0').catch(() => undefined);
    });
    await expect(work).rejects.toThrow(/division by zero/);
    expect(await dataSource.query('SELECT n FROM written')).toEqual([]);
  });

  it('statements sent without waiting go out with COMMIT: BEGIN, the sends, the last statement and COMMIT in one write', async () => {
    await dataSource.query('TRUNCATE written');
    const writes = await socketWritesDuring(async () => {
      const commit = transactions.openDeferredCommit();
      await transactions.runJoinable(async (db) => {
        db.send('INSERT INTO written VALUES ($1)', [1]);
        db.send('INSERT INTO written VALUES ($1)', [2]);
      }, commit);
      await commit.commitWith((db) => db.query('INSERT INTO written VALUES ($1)', [3]));
    });
    expect(writes).toBe(1);
    expect(await dataSource.query('SELECT n FROM written ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  const gate = (open: boolean) => ({ text: 'SELECT $1::boolean AS open, $2::text AS note', values: [open, 'gate'], opensOn: 'open' });

  it('a gate goes out with the first write as one statement, alone: one write; an open gate commits the write', async () => {
    await dataSource.query('TRUNCATE written');
    await dataSource.query(`CREATE OR REPLACE FUNCTION write_n(p int) RETURNS TABLE (n int) LANGUAGE sql VOLATILE AS $$ INSERT INTO written VALUES (p) RETURNING n $$`);
    const commit = transactions.openDeferredCommit();
    const writes = await socketWritesDuring(async () => {
      const { gateRow } = commit.startWith(gate(true));
      const written = await transactions.runFirst((db) => db.query('SELECT * FROM write_n($1::int)', [2]), commit);
      expect(written.rows).toEqual([{ n: 2 }]);
      expect(written.fields.map((field) => field.name)).toEqual(['n']);
      expect(await gateRow).toEqual({ open: true, note: 'gate' });
    });
    expect(writes).toBe(1);
    expect(await commit.gatePassed).toBe(true);
    // The deferred commit stays open for the request's later writes, in a transaction of their own.
    await commit.commitWith((db) => db.query('INSERT INTO written VALUES ($1)', [3]));
    expect(await dataSource.query('SELECT n FROM written ORDER BY n')).toEqual([{ n: 2 }, { n: 3 }]);
  });

  it('a closed gate: the write\'s function never runs, nothing raises (the statement commits), and the write rejects with GateClosedError', async () => {
    await dataSource.query('TRUNCATE written');
    await dataSource.query(`CREATE OR REPLACE FUNCTION write_n(p int) RETURNS TABLE (n int) LANGUAGE sql VOLATILE AS $$ INSERT INTO written VALUES (p) RETURNING n $$`);
    // A plan made without the parameters' values (generic) must hold the gate too: it is decided when the statement runs.
    for (const planCacheMode of ['force_custom_plan', 'force_generic_plan']) {
      await dataSource.query(`SET plan_cache_mode = ${planCacheMode}`);
      const closed = transactions.openDeferredCommit();
      // The gate writes a row of its own (100): it survives only if nothing raised and the transaction committed.
      const { gateRow } = closed.startWith({ text: 'SELECT $1::boolean AS open, (SELECT n FROM write_n(100)) AS mark', values: [false], opensOn: 'open' });
      await expect(transactions.runFirst((db) => db.query('SELECT * FROM write_n($1::int)', [1]), closed)).rejects.toBeInstanceOf(GateClosedError);
      expect(await gateRow).toEqual({ open: false, mark: 100 });
      expect(await closed.gatePassed).toBe(false);
    }
    await dataSource.query('RESET plan_cache_mode');
    expect(await dataSource.query('SELECT n FROM written')).toEqual([{ n: 100 }, { n: 100 }]);

  });

  it('a gate that fails takes the first write down with it; one never sent is rolled back; a join cannot carry it', async () => {
    await dataSource.query('TRUNCATE written');
    const refused = transactions.openDeferredCommit();
    const { gateRow } = refused.startWith({ text: 'SELECT 1 / 0 = 1 AS open', values: [], opensOn: 'open' });
    await expect(transactions.runFirst((db) => db.query('SELECT * FROM write_n(1)'), refused)).rejects.toThrow(/division by zero/);
    expect(await gateRow).toBeUndefined();
    expect(await refused.gatePassed).toBe(false);
    const unsent = transactions.openDeferredCommit();
    unsent.startWith(gate(true));
    await expect(transactions.runJoinable((db) => db.query('INSERT INTO written VALUES (3)'), unsent)).rejects.toThrow(/runFirst/);
    await unsent.rollback();
    expect(await unsent.gatePassed).toBe(false);
    expect(await dataSource.query('SELECT n FROM written')).toEqual([]);
  });

  it('a sent statement that fails rolls back the transaction, and its commit rejects with that error', async () => {
    await dataSource.query('TRUNCATE written');
    const work = transactions.run(async (db) => {
      db.send('INSERT INTO written VALUES (1)');
      db.send('SELECT 1 / 0');
      db.send('INSERT INTO written VALUES (2)');
    });
    await expect(work).rejects.toThrow(/division by zero/);
    const commit = transactions.openDeferredCommit();
    await transactions.runJoinable(async (db) => db.send('SELECT 1 / 0'), commit);
    await expect(commit.commitWith((db) => db.query('INSERT INTO written VALUES (3)'))).rejects.toThrow(/division by zero/);
    expect(await dataSource.query('SELECT n FROM written')).toEqual([]);
  });

  it('a deferred commit whose last statement fails, sent together with COMMIT, rolls back every joined write', async () => {
    await dataSource.query('TRUNCATE written');
    const failing = transactions.openDeferredCommit();
    await transactions.runJoinable((db) => db.query('INSERT INTO written VALUES (1)'), failing);
    await transactions.runJoinable((db) => db.query('INSERT INTO written VALUES (2)'), failing);
    await expect(failing.commitWith((db) => db.query('SELECT 1 / 0'))).rejects.toThrow(/division by zero/);
    expect(await dataSource.query('SELECT n FROM written')).toEqual([]);
    const succeeding = transactions.openDeferredCommit();
    await transactions.runJoinable((db) => db.query('INSERT INTO written VALUES (3)'), succeeding);
    await succeeding.commitWith((db) => db.query('INSERT INTO written VALUES (4)'));
    // Once committed it is closed: a late joiner runs a transaction of its own.
    await transactions.runJoinable((db) => db.query('INSERT INTO written VALUES (5)'), succeeding);
    expect(await dataSource.query('SELECT n FROM written ORDER BY n')).toEqual([{ n: 3 }, { n: 4 }, { n: 5 }]);
  });

  it('leaks nothing into the next transaction on the same connection when one fails with statements still in flight', async () => {
    await dataSource.query('TRUNCATE written');
    await expect(
      transactions.run(async (db) => {
        // Issued together and never awaited: the work gives up while they are still on the wire.
        for (const statement of ['SELECT 1 / 0', 'INSERT INTO written VALUES (1)', "SELECT 'stale' AS answer"]) db.query(statement).catch(() => undefined);
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    const next = await transactions.run(async (db) => ({
      answer: await rows(db, "SELECT 'fresh' AS answer"),
      lock: await setting((sql) => rows(db, sql), 'lock_timeout'),
    }));
    expect(next).toEqual({ answer: [{ answer: 'fresh' }], lock: '5s' });
    expect(await dataSource.query('SELECT n FROM written')).toEqual([]);
    expect((await dataSource.query(`SELECT count(*)::int AS open FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`))[0].open).toBe(0);
  });

  it('discards a connection that died inside a transaction: the next transaction gets a new one', async () => {
    const before = await transactions.run(async (db) => (await rows(db, 'SELECT pg_backend_pid() AS pid'))[0]!.pid);
    await expect(transactions.run((db) => db.query('SELECT pg_terminate_backend(pg_backend_pid())'))).rejects.toThrow();
    const after = await transactions.run(async (db) => (await rows(db, 'SELECT pg_backend_pid() AS pid'))[0]!.pid);
    expect(after).not.toBe(before);
    expect(await transactions.run((db) => rows(db, 'SELECT 2 AS two'))).toEqual([{ two: 2 }]);
  });
});
