import type pg from 'pg';
import { connect } from './test-database.js';
import { waitUntil } from './waiting.js';

/** The partitions of a table partitioned by day (daily_partitions), matching `where`, by name. */
export async function partitionsOf(db: pg.Client, table: string, where = 'true'): Promise<string[]> {
  return (await db.query(`SELECT name FROM daily_partitions($1::text::regclass) WHERE ${where} ORDER BY name`, [table])).rows.map((r) => r.name);
}

export async function tableExists(db: pg.Client, name: string): Promise<boolean> {
  return (await db.query(`SELECT to_regclass($1) IS NOT NULL AS e`, [name])).rows[0].e;
}

/**
 * Leaves `partition` of `table` as a purge killed mid-DETACH would: `detach pending`. A transaction that
 * has read the table holds the DETACH ... CONCURRENTLY in its second phase, where it is cancelled
 * (57014). Resolves once the reader has committed and the detach is pending.
 */
export async function leaveDetachPending(url: string, db: pg.Client, table: string, partition: string): Promise<void> {
  const reader = await connect(url);
  const detacher = await connect(url);
  try {
    await reader.query(`BEGIN ISOLATION LEVEL REPEATABLE READ`);
    await reader.query(`SELECT count(*) FROM ${table}`);
    const detaching = detacher.query(`ALTER TABLE ${table} DETACH PARTITION ${partition} CONCURRENTLY`).then(
      () => 'detached',
      (error: { code?: string }) => error.code,
    );
    await waitUntil(async () => (await partitionsOf(db, table, 'detach_pending')).includes(partition));
    await db.query(`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()`, [`ALTER TABLE ${table} DETACH%`]);
    if ((await detaching) !== '57014') throw new Error(`the detach of ${partition} was not cancelled midway`);
    await reader.query('COMMIT');
  } finally {
    await reader.end();
    await detacher.end();
  }
}
