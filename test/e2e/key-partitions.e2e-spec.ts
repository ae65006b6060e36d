import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { pgPoolOf } from '../../src/database/query-rows.js';
import type { IdempotencyStore } from '../../src/idempotency/idempotency.store.js';
import type { ClaimOutcome, KeyRequest } from '../../src/idempotency/idempotency.types.js';
import { insertExpiredKeys } from '../support/ledger.js';
import { openStore, type StoreHarness } from '../support/idempotency-store.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { leaveDetachPending, partitionsOf, tableExists as tableExistsIn } from '../support/partitions.js';

/**
 * The partitioned keys table (migration 1764700028500) under races: claims of one key with no unique
 * constraint to stop them, claims while the purge creates and drops partitions, and a purge stopped
 * halfway. Real: the service's store and purge job, a pool of real connections, PostgreSQL.
 */
const TTL_SECONDS = 3600;
const ROUNDS = 300;

describe('partitions of idempotency_keys under races and restarts', () => {
  let app: AppProcess;
  let harness: StoreHarness;
  let store: IdempotencyStore;
  let db: pg.Client;
  let url: string;

  beforeAll(async () => {
    url = await createTestDatabase('key_partitions');
    // Its own purge never runs: a run at a ten-minute mark would create the days a test counts.
    app = await startAppProcess(url, { IDEMPOTENCY_PURGE_CRON: '0 0 1 1 *' });
    harness = await openStore(url, { poolSize: 12, ttlSeconds: TTL_SECONDS });
    store = harness.store;
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await harness?.close();
    await app?.stop();
  });

  const request = (key: string): KeyRequest => ({ scope: 'alice', key, fingerprint: 'a'.repeat(64) });
  const claimed = (outcomes: ClaimOutcome[]) => outcomes.filter((o) => o.kind === 'claimed');
  const partitions = (where: string): Promise<string[]> => partitionsOf(db, 'idempotency_keys', where);
  const expiredPartitions = () => partitions('upper_bound <= now()');
  const tableExists = (name: string): Promise<boolean> => tableExistsIn(db, name);
  /** Partitions of days from the day after tomorrow on: no key of this TTL expires there, so removing them loses nothing. */
  const removeEmptyFuturePartitions = async (): Promise<number> => {
    const future = await partitions(`lower_bound >= (date_trunc('day', now() AT TIME ZONE 'UTC') + interval '2 days') AT TIME ZONE 'UTC'`);
    for (const name of future) {
      await db.query(`ALTER TABLE idempotency_keys DETACH PARTITION ${name}`);
      await db.query(`DROP TABLE ${name}`);
    }
    return future.length;
  };

  it(`two claims of one key on two connections: exactly one wins, in each of ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = request(randomUUID());
      expect(claimed(await Promise.all([store.claimKey(key), store.claimKey(key)]))).toHaveLength(1);
    }
  });

  it(`two claims of one expired key: exactly one starts a new operation, in each of ${ROUNDS} rounds`, async () => {
    const prefix = `expired-${randomUUID()}-`;
    await insertExpiredKeys(db, ROUNDS, prefix);
    for (let round = 1; round <= ROUNDS; round++) {
      const winners = claimed(await Promise.all([store.claimKey(request(prefix + round)), store.claimKey(request(prefix + round))]));
      expect(winners).toEqual([expect.objectContaining({ origin: 'expired_key' })]);
    }
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key LIKE $1 || '%' AND expires_at > now()`, [prefix]);
    expect(rows[0].n).toBe(ROUNDS);
  });

  it('claims racing the creation and the drop of partitions lose no key, and no live key is dropped', async () => {
    await insertExpiredKeys(db, 20_000, `racing-1-${randomUUID()}-`, 'alice', 1);
    await insertExpiredKeys(db, 20_000, `racing-2-${randomUUID()}-`, 'alice', 2);
    expect(await removeEmptyFuturePartitions()).toBeGreaterThan(0);
    const inExpiredPartitions = (await db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE expires_at < date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`)).rows[0].n;
    const keys = Array.from({ length: 600 }, () => randomUUID());
    const claims = (async () => {
      const outcomes: ClaimOutcome[] = [];
      for (let i = 0; i < keys.length; i += 10) outcomes.push(...(await Promise.all(keys.slice(i, i + 10).map((key) => store.claimKey(request(key))))));
      return outcomes;
    })();
    const purges = Promise.all([harness.purgeJob.purgeOnce(), harness.purgeJob.purgeOnce(), store.createKeyPartitions()]);
    const [outcomes, [first, second]] = await Promise.all([claims, purges]);
    expect(claimed(outcomes)).toHaveLength(keys.length);
    expect(first + second).toBe(inExpiredPartitions);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ANY($1) AND expires_at > now()`, [keys]);
    expect(rows[0].n).toBe(keys.length);
    expect(await expiredPartitions()).toEqual([]);
  });

  it('replicas creating partitions at once create each day once, and a second run creates none', async () => {
    const removed = await removeEmptyFuturePartitions();
    const created = await Promise.all(Array.from({ length: 5 }, () => store.createKeyPartitions()));
    expect(created.reduce((a, b) => a + b, 0)).toBe(removed);
    expect(await store.createKeyPartitions()).toBe(0);
  });

  it('restart after a partition was detached but not dropped: the next run drops it and counts its keys', async () => {
    await insertExpiredKeys(db, 120, `detached-${randomUUID()}-`);
    const [name] = await expiredPartitions();
    await db.query(`ALTER TABLE idempotency_keys DETACH PARTITION ${name}`);
    expect(await harness.purgeJob.purgeOnce()).toBe(120);
    expect(await tableExists(name!)).toBe(false);
  });

  it('restart after an interrupted DETACH ... CONCURRENTLY: the next run finalizes it and drops the partition', async () => {
    await insertExpiredKeys(db, 80, `pending-${randomUUID()}-`);
    const [name] = await expiredPartitions();
    await leaveDetachPending(url, db, 'idempotency_keys', name!);
    expect(await partitions('detach_pending')).toEqual([name]);
    expect(await harness.purgeJob.purgeOnce()).toBe(80);
    expect(await tableExists(name!)).toBe(false);
  });

  it('the purge takes its steps apart: two expired days are each seen detached and not yet dropped, one after the other', async () => {
    await insertExpiredKeys(db, 40, `paced-a-${randomUUID()}-`, 'alice', 1);
    await insertExpiredKeys(db, 40, `paced-b-${randomUUID()}-`, 'alice', 2);
    const days = await expiredPartitions();
    expect(days).toHaveLength(2);
    const seenAlone = new Set<string>();
    const purge = harness.purgeJob.purgeOnce();
    let finished = false;
    void purge.finally(() => (finished = true));
    while (!finished) {
      // A detached day still there, the other one either still attached or already gone.
      const detached = await db.query<{ name: string }>(
        `SELECT relname AS name FROM pg_class WHERE relname = ANY($1) AND relkind = 'r' AND NOT relispartition`, [days]);
      if (detached.rowCount === 1) seenAlone.add(detached.rows[0]!.name);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await purge).toBe(80);
    expect([...seenAlone].sort()).toEqual([...days].sort());
    for (const day of days) expect(await tableExists(day)).toBe(false);
  });

  it('a shutdown stops the purge between two steps: the first day is dropped, the second left to the next run, which drops it', async () => {
    await insertExpiredKeys(db, 40, `stopped-a-${randomUUID()}-`, 'alice', 1);
    await insertExpiredKeys(db, 40, `stopped-b-${randomUUID()}-`, 'alice', 2);
    const days = await expiredPartitions();
    expect(days).toHaveLength(2);
    const stopping = new AbortController();
    const purge = harness.purgeJob.purgeOnce(stopping.signal);
    // Stop once the first day is gone: the purge is then in the pause before the second day's detach.
    while ((await Promise.all(days.map(tableExists))).every(Boolean)) await new Promise((resolve) => setTimeout(resolve, 20));
    stopping.abort(new Error('shutting down'));
    await expect(purge).rejects.toThrow();
    expect((await Promise.all(days.map(tableExists))).filter(Boolean)).toHaveLength(1);
    expect(await harness.purgeJob.purgeOnce()).toBe(40);
    for (const day of days) expect(await tableExists(day)).toBe(false);
  });

  it('the drop takes no connection from the requests\' pool: with every pooled connection checked out, it still drops the day', async () => {
    await insertExpiredKeys(db, 30, `own-connection-${randomUUID()}-`);
    const [name] = await expiredPartitions();
    const pool = pgPoolOf(harness.dataSource);
    const held = await Promise.all(Array.from({ length: 12 }, () => pool.connect()));
    try {
      expect(await store.dropExpiredKeyPartitions()).toEqual([{ table: 'idempotency_keys', name, rows: 30 }]);
    } finally {
      for (const client of held) client.release();
    }
    expect(await tableExists(name!)).toBe(false);
  });
});
