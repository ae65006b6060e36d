import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { ALICE } from '../support/clients.js';
import { insertExpiredKeys as insertExpired, keyRow } from '../support/ledger.js';
import { nuevoPago, postPago } from '../support/http.js';
import { openStore, type StoreHarness } from '../support/idempotency-store.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

/** Key expiry and the purge job, on real PostgreSQL; expiry is reached by backdating, never by sleeping. */
const TTL_SECONDS = 3600;

describe('key expiry and purge', () => {
  let url: string;
  let app: AppProcess;
  let harness: StoreHarness;
  let db: pg.Client;

  beforeAll(async () => {
    url = await createTestDatabase('expiry_purge');
    app = await startAppProcess(url, { IDEMPOTENCY_TTL_SECONDS: String(TTL_SECONDS) });
    harness = await openStore(url, { ttlSeconds: TTL_SECONDS });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await harness?.close();
    await app?.stop();
  });

  const expire = (key: string) =>
    db.query(`UPDATE idempotency_keys SET created_at = created_at - interval '2 hours', expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
  const insertExpiredKeys = (count: number, prefix: string) => insertExpired(db, count, prefix);
  const countKeys = async (prefix: string) =>
    (await db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key LIKE $1 || '%'`, [prefix])).rows[0].n;

  it('expiresAt is createdAt + IDEMPOTENCY_TTL_SECONDS', async () => {
    const key = randomUUID();
    await postPago(app.baseUrl, { client: ALICE, key, body: nuevoPago() });
    const { rows } = await db.query(`SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM idempotency_keys WHERE key = $1`, [key]);
    expect(rows[0].ttl).toBe(TTL_SECONDS);
  });

  const countIntents = async (): Promise<number> => (await db.query(`SELECT count(*)::int AS n FROM procesador_local.payment_intents`)).rows[0].n;

  it('an expired key is treated as unused on read, before any purge: the request runs as a new operation', async () => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'tok_decline' });
    const first = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(first.status).toBe(402);
    const intents = await countIntents();
    await expire(key);

    const again = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(again.status).toBe(402);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.json.pago.id).not.toBe(first.json.pago.id);
    // A new operation: a new intent at the processor, declined again.
    expect(await countIntents()).toBe(intents + 1);
    const row = await keyRow(db, 'alice', key);
    expect(new Date(row!.expires_at).getTime()).toBeGreaterThan(Date.now());
  });

  it('an expired key may be reused with a different request: no 422', async () => {
    const key = randomUUID();
    await postPago(app.baseUrl, { client: ALICE, key, body: nuevoPago() });
    await expire(key);
    const other = await postPago(app.baseUrl, { client: ALICE, key, body: nuevoPago({ monto: 500 }) });
    expect(other.status).toBe(201);
    expect(other.json.monto).toBe(500);
  });

  const expiredPartitions = async (): Promise<string[]> =>
    (await db.query(`SELECT name FROM daily_partitions('idempotency_keys') WHERE upper_bound <= now() ORDER BY name`)).rows.map((r) => r.name);

  it('purgeOnce drops the partitions of days gone with their keys, and leaves live keys alone', async () => {
    await insertExpiredKeys(1_207, 'day1-');
    await insertExpired(db, 300, 'day2-', 'alice', 2);
    expect(await expiredPartitions()).toHaveLength(2);
    const live = randomUUID();
    await postPago(app.baseUrl, { client: ALICE, key: live, body: nuevoPago() });
    expect(await harness.purgeJob.purgeOnce()).toBe(1_507);
    expect(await countKeys('day1-')).toBe(0);
    expect(await countKeys('day2-')).toBe(0);
    expect(await expiredPartitions()).toEqual([]);
    expect(await keyRow(db, 'alice', live)).toBeDefined();
    expect(await harness.purgeJob.purgeOnce()).toBe(0);
  });

  it('a key expired today stays, ignored on read, until its day is past and its partition dropped', async () => {
    const key = randomUUID();
    await postPago(app.baseUrl, { client: ALICE, key, body: nuevoPago() });
    await expire(key);
    await harness.purgeJob.purgeOnce();
    expect(await countKeys(key)).toBe(1);
    expect(await harness.store.describeKey('alice', key)).toMatchObject({ expired: true });
  });

  it('partitions stand ready for every day a key claimed now may expire on, plus three', async () => {
    await harness.purgeJob.purgeOnce();
    const { rows } = await db.query(
      `SELECT max(upper_bound) > now() + make_interval(secs => $1::int, days => 3) AS ready FROM daily_partitions('idempotency_keys')`,
      [TTL_SECONDS],
    );
    expect(rows[0].ready).toBe(true);
  });

  it('a claim whose expiry day has no partition yet creates the partitions and wins', async () => {
    const longLived = await openStore(url, { ttlSeconds: 40 * 86_400 });
    try {
      const outcome = await longLived.store.claimKey({ scope: 'alice', key: randomUUID(), fingerprint: 'a'.repeat(64) });
      expect(outcome.kind).toBe('claimed');
    } finally {
      await longLived.close();
    }
  });

  it('the scheduled job purges expired keys on its own', async () => {
    await insertExpiredKeys(1_000, 'cron-');
    const everySecond = await startAppProcess(url, { IDEMPOTENCY_PURGE_CRON: '* * * * * *', DB_MIGRATIONS_RUN: 'false' });
    try {
      for (let i = 0; i < 100 && (await countKeys('cron-')) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await countKeys('cron-')).toBe(0);
    } finally {
      await everySecond.stop();
    }
  });
});
