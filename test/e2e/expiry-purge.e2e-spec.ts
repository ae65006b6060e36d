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
const BATCH = 500;

describe('key expiry and purge', () => {
  let url: string;
  let app: AppProcess;
  let harness: StoreHarness;
  let db: pg.Client;

  beforeAll(async () => {
    url = await createTestDatabase('expiry_purge');
    app = await startAppProcess(url, { IDEMPOTENCY_TTL_SECONDS: String(TTL_SECONDS), IDEMPOTENCY_PURGE_BATCH_SIZE: String(BATCH) });
    harness = await openStore(url, { ttlSeconds: TTL_SECONDS, purgeBatchSize: BATCH });
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

  it('one purge statement deletes at most one batch, oldest first, and leaves live keys alone', async () => {
    await insertExpiredKeys(BATCH * 2 + 7, 'batch-');
    const live = randomUUID();
    await postPago(app.baseUrl, { client: ALICE, key: live, body: nuevoPago() });
    expect(await harness.store.purgeExpiredKeys()).toBe(BATCH);
    expect(await countKeys('batch-')).toBe(BATCH + 7);
    expect(await harness.purgeJob.purgeOnce()).toBe(BATCH + 7);
    expect(await countKeys('batch-')).toBe(0);
    expect(await keyRow(db, 'alice', live)).toBeDefined();
  });

  it('purgeOnce clears 20,000 expired keys in bounded batches', async () => {
    await insertExpiredKeys(20_000, 'many-');
    const purged = await harness.purgeJob.purgeOnce();
    expect(purged).toBe(20_000);
    expect(await countKeys('many-')).toBe(0);
  });

  it('the purge uses the expires_at index instead of scanning the table', async () => {
    await insertExpiredKeys(5_000, 'plan-');
    await db.query('ANALYZE idempotency_keys');
    await db.query('SET enable_seqscan = off');
    const { rows } = await db.query(
      `EXPLAIN SELECT scope, key FROM idempotency_keys WHERE expires_at <= now() ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED`,
    );
    await db.query('RESET enable_seqscan');
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('idempotency_keys_expires_at_idx');
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
