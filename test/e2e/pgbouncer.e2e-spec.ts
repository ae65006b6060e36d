import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type pg from 'pg';
import { runMigrationScript, startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { expectOneExecution } from '../support/duplicate-answers.js';
import { countCharges, expireLease, insertExpiredKeys, waitForClaim } from '../support/ledger.js';
import { nuevoPago, postPago } from '../support/http.js';
import { tableExists } from '../support/partitions.js';
import { PgBouncer } from '../support/pgbouncer.js';
import { describeWhenAvailable, PGBOUNCER } from '../support/requirements.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';
import { metricOf, postWaiting } from '../support/waiters.js';

/**
 * The scale-out path: two service processes reach PostgreSQL only through PgBouncer in
 * transaction-pooling mode, their pools of 10 sharing 4 server connections, so consecutive
 * transactions of one replica run on different server sessions. The migration runs once directly
 * against PostgreSQL (its lock is a session advisory lock, which transaction pooling would break).
 * Each replica's session connections, its LISTEN (waiting duplicates) and its partition purge's (a
 * session advisory lock), go to PostgreSQL directly (`DATABASE_LISTEN_URL`), since a transaction-mode
 * pooler keeps no session.
 * Real: PgBouncer, processes, HTTP, PostgreSQL. Stale leases are reached by backdating `locked_at`.
 * Without the pgbouncer binary the file is skipped with a line saying so, except under CI.
 */
const SERVER_CONNECTIONS = 4;
const DUPLICATES = 20;
const PURGE_ROUNDS = 4;
const PURGE_POLLS = 4_000;

describeWhenAvailable(PGBOUNCER, 'two replicas through PgBouncer in transaction mode', () => {
  let url: string;
  let bouncer: PgBouncer;
  let replicas: AppProcess[];
  let db: pg.Client;
  const others: AppProcess[] = [];

  const replicaEnv = { DB_MIGRATIONS_RUN: 'false', DB_POOL_SIZE: '10', GATEWAY_LATENCY_MS: '300' };

  beforeAll(async () => {
    url = await createTestDatabase('pgbouncer');
    const migration = await runMigrationScript('run', url);
    if (migration.code !== 0) throw new Error(`migration failed:\n${migration.output}`);
    bouncer = await PgBouncer.start(url, { poolSize: SERVER_CONNECTIONS });
    // Every second, so that the purge test waits for a tick rather than for minutes.
    const env = { ...replicaEnv, IDEMPOTENCY_PURGE_CRON: '* * * * * *', DATABASE_LISTEN_URL: url };
    replicas = await Promise.all([startAppProcess(bouncer.urlFor(url), env), startAppProcess(bouncer.urlFor(url), env)]);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all([...(replicas ?? []), ...others].map((app) => app.stop('SIGKILL')));
    await bouncer?.stop();
  });

  const [first, second] = [() => replicas[0]!.baseUrl, () => replicas[1]!.baseUrl];

  /** `work`, while payments keep both replicas busy: the bouncer's server connections change hands between statements. */
  async function whilePaying(work: () => Promise<void>): Promise<void> {
    let done = false;
    const pay = async (replica: AppProcess) => {
      while (!done) expect((await postPago(replica.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() })).status).toBe(201);
    };
    const payers = [...replicas, ...replicas].map(pay);
    try {
      await work();
    } finally {
      done = true;
      await Promise.all(payers);
    }
  }

  it('a first request is 201; its retry on the other replica is the byte-identical answer with Idempotent-Replayed', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const created = await postPago(first(), { client: ALICE, key, body });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
    const charges = await countCharges(db);

    const replay = await postPago(second(), { client: ALICE, key, body });
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(created.text);
    expect(replay.headers.get('location')).toBe(created.headers.get('location'));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await countCharges(db)).toBe(charges);
  });

  it('the same key with a different body is 422 and charges nothing', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    expect((await postPago(first(), { client: ALICE, key, body })).status).toBe(201);
    const charges = await countCharges(db);
    const mismatch = await postPago(second(), { client: ALICE, key, body: { ...body, monto: body.monto + 1 } });
    expect(mismatch.status).toBe(422);
    expect(mismatch.json.type).toContain('idempotency-key-reused');
    expect(await countCharges(db)).toBe(charges);
  });

  it('a 402 decline is stored and replayed by the other replica', async () => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'tok_decline' });
    const declined = await postPago(first(), { client: ALICE, key, body });
    expect(declined.status).toBe(402);
    const replay = await postPago(second(), { client: ALICE, key, body });
    expect({ status: replay.status, text: replay.text, replayed: replay.headers.get('idempotent-replayed') }).toEqual({
      status: 402,
      text: declined.text,
      replayed: 'true',
    });
  });

  it(`${DUPLICATES} concurrent duplicates over both replicas: one charge, every other answer a 409 or the stored answer`, async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const results = await Promise.all(
      Array.from({ length: DUPLICATES }, (_, i) => postPago(replicas[i % 2]!.baseUrl, { client: ALICE, key, body })),
    );
    expectOneExecution(results);
    expect(await countCharges(db)).toBe(charges + 1);
  });

  it('a claim left by a killed process is taken over once its lease is backdated, and charged once', async () => {
    const victim = await startAppProcess(bouncer.urlFor(url), { ...replicaEnv, GATEWAY_LATENCY_MS: '3000', DATABASE_LISTEN_URL: url });
    others.push(victim);
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const lost = postPago(victim.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    await victim.stop('SIGKILL');
    await expect(lost).rejects.toThrow('fetch failed');
    expect((await postPago(first(), { client: ALICE, key, body })).status).toBe(409);

    await expireLease(db, key);
    const recovered = await postPago(first(), { client: ALICE, key, body });
    expect(recovered.status).toBe(201);
    expect((await postPago(second(), { client: ALICE, key, body })).text).toBe(recovered.text);
    expect(await countCharges(db)).toBe(charges + 1);
  });

  it('a duplicate waiting on one replica (Prefer: wait) gets the first answer from the other, woken through the direct LISTEN', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const firstAttempt = postPago(first(), { client: ALICE, key, body });
    await waitForClaim(db, key);
    const waited = await postWaiting(second(), 10, { client: ALICE, key, body });
    expect({ status: waited.status, text: waited.text, replayed: waited.headers.get('idempotent-replayed') }).toEqual({
      status: 201,
      text: (await firstAttempt).text,
      replayed: 'true',
    });
    expect(await countCharges(db)).toBe(charges + 1);
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'notification-listener'`,
    );
    expect(rows[0].n).toBeGreaterThanOrEqual(2);
  });

  it('a replica whose LISTEN goes through the bouncer notices that no notification arrives, and its waiters poll', async () => {
    const misconfigured = await startAppProcess(bouncer.urlFor(url), replicaEnv);
    others.push(misconfigured);
    expect(misconfigured.output()).toContain('a test notification did not come back');
    expect(await metricOf(misconfigured, 'idempotency_listener_connected')).toBe(0);
    const key = randomUUID();
    const body = nuevoPago();
    const firstAttempt = postPago(first(), { client: ALICE, key, body });
    await waitForClaim(db, key);
    const waited = await postWaiting(misconfigured.baseUrl, 10, { client: ALICE, key, body });
    expect({ status: waited.status, text: waited.text }).toEqual({ status: 201, text: (await firstAttempt).text });
  });

  it('the scheduled purge drops expired days round after round beside payments, its lock never left with a pooled connection', async () => {
    const lockHolders = new Set<string>();
    const purged = async () => {
      for (const holder of await purgeLockHolders(db)) lockHolders.add(holder);
      return !(await tableExists(db, yesterdaysKeyPartition()));
    };
    for (let round = 1; round <= PURGE_ROUNDS; round++) {
      const prefix = `expired-via-bouncer-${round}-`;
      await insertExpiredKeys(db, 250, prefix);
      // Gone from the catalog: the purge's last step done, so the next round can make the day again.
      // A tick, the detach, a second's pause and the drop: a few seconds, more on a loaded machine.
      await whilePaying(() => waitUntil(purged, PURGE_POLLS));
      expect((await db.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key LIKE $1`, [`${prefix}%`])).rows[0].n).toBe(0);
    }
    // Held only ever by a purge's own session, straight to PostgreSQL (DATABASE_LISTEN_URL). Through the
    // bouncer the unlock would run on another server connection than the lock, and the lock stay with
    // one that then serves payments ('pagos'), refusing every purge run that lands elsewhere.
    expect([...lockHolders]).toEqual(['pagos-purge']);
  });

  it(`PgBouncer really carried the traffic: both replicas are its clients, and PostgreSQL saw at most ${SERVER_CONNECTIONS} of its connections`, async () => {
    const database = new URL(url).pathname.slice(1);
    const clients = (await bouncer.admin('SHOW CLIENTS')).filter((c) => c.database === database && c.application_name === 'pagos');
    expect(clients.length).toBeGreaterThanOrEqual(2);
    const [stats] = (await bouncer.admin('SHOW STATS')).filter((s) => s.database === database);
    expect(Number(stats!.total_xact_count)).toBeGreaterThan(0);
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
          AND application_name NOT IN ('notification-listener', 'pagos-purge', 'local-processor-instance')`,
    );
    expect(rows[0].n).toBeGreaterThan(0);
    expect(rows[0].n).toBeLessThanOrEqual(SERVER_CONNECTIONS);
  });
});

/** The partition insertExpiredKeys fills: the keys that expired a day ago. */
function yesterdaysKeyPartition(): string {
  return `idempotency_keys_p${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The application_name of each session of this database holding a purge's advisory lock now (see daily-partitions.sql.ts). */
async function purgeLockHolders(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid)
      WHERE l.locktype = 'advisory' AND l.classid = 1764700030 AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return rows.map((row) => row.application_name);
}
