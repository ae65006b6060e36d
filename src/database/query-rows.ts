import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

/**
 * Where a statement runs: the pool (one statement, autocommit) or an open transaction's connection
 * (see `Transactions`). node-postgres directly: TypeORM's query runner adds a connection per call,
 * events and result reshaping that these hand-written statements never use.
 */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
}

/**
 * An open transaction's connection. `send` queues a statement nobody waits for: it goes out in one
 * write with the next statement someone awaits, or with COMMIT, and should it fail, PostgreSQL
 * refuses the rest of the transaction and its COMMIT rejects with that statement's error.
 */
export interface Transaction extends Queryable {
  send(text: string, values?: unknown[]): void;
}

/** Runs one parameterised statement and returns its rows (RETURNING, or a SELECT's). */
export async function queryRows<Row>(db: Queryable, sql: string, parameters: readonly unknown[]): Promise<Row[]> {
  return (await db.query(sql, parameters as unknown[])).rows as Row[];
}

/** The node-postgres pool behind an initialized DataSource (its `extra` options configure it). */
export function pgPoolOf(dataSource: DataSource): pg.Pool {
  const pool = (dataSource.driver as PostgresDriver).master as pg.Pool | undefined;
  if (!pool) throw new Error('the DataSource is not initialized: it has no connection pool yet');
  return pool;
}
