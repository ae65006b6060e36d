import type pg from 'pg';

/** Where a statement runs: the pool (autocommit) or an open transaction's connection. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
}

// A confirmation or refund waits at most this long for the row another one holds, instead of queueing forever.
const LOCK_TIMEOUT_MS = 5_000;
// Every statement here touches a few rows; anything slower is a fault to surface.
const STATEMENT_TIMEOUT_MS = 15_000;
const BEGIN = `BEGIN; SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}; SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`;

/** Runs `work` in one transaction and commits it; any error rolls it back and is rethrown. */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(BEGIN);
    const result = await work(client);
    const commit = await client.query('COMMIT');
    if (commit.command !== 'COMMIT') throw new Error(`the transaction ended with ${commit.command} instead of COMMIT`);
    client.release();
    return result;
  } catch (error) {
    // A connection that cannot even roll back is broken: destroy it rather than pool it.
    const rolledBack = await client.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    client.release(!rolledBack);
    throw error;
  }
}
