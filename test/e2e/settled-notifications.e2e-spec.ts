import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { runMigrationsExclusively } from '../../src/database/migrations.js';
import type { IdempotencyStore } from '../../src/idempotency/idempotency.store.js';
import { COMPLETE_KEY, MARK_KEY_WAITED } from '../../src/idempotency/idempotency.sql.js';
import type { Claim, KeyRequest } from '../../src/idempotency/idempotency.types.js';
import { expireLease, keyRow } from '../support/ledger.js';
import { claimKeyOf, completeOf, openStore, type StoreHarness } from '../support/idempotency-store.js';
import { listenForSettledKeys, type SettledNotifications } from '../support/settled-notifications.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil, within } from '../support/waiting.js';

/**
 * The settled-key trigger notifies only keys a waiting duplicate marked (MARK_KEY_WAITED), and a mark
 * racing the settlement of its key never leaves the waiter with neither the settled key nor a
 * notification. Real: the service's migrations, store, Transactions and statements, node-postgres,
 * PostgreSQL's trigger and a `LISTEN` on a connection of its own. Nothing waits for a notification
 * that must not come: one connection receives notifications in commit order, so a later one that
 * arrives proves the earlier one was never sent.
 */
const RACE_ROUNDS = 200;
// Only a guard against hanging on a notification that never comes; they arrive in milliseconds.
const NOTIFIED_WITHIN_MS = 5_000;

describe('notifications of settled keys', () => {
  let url: string;
  let harness: StoreHarness;
  let store: IdempotencyStore;
  let settled: SettledNotifications;
  let db: pg.Client;

  beforeAll(async () => {
    url = await createTestDatabase('settled_notifications');
    harness = await openStore(url, { poolSize: 4 });
    await runMigrationsExclusively(harness.dataSource);
    store = harness.store;
    settled = await listenForSettledKeys(url);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await settled?.close();
    await harness?.close();
  });

  const newRequest = (): KeyRequest => ({ scope: 'alice', key: randomUUID(), fingerprint: 'a'.repeat(64) });
  const claimOf = (request: KeyRequest = newRequest()): Promise<Claim> => claimKeyOf(store, request);
  const complete = (claim: Claim): Promise<boolean> => completeOf(harness, claim);
  const notified = (key: string, times = 1): Promise<void> => within(settled.notified(key, times), NOTIFIED_WITHIN_MS);
  /**
   * Runs `hold` in a transaction on a connection of its own, starts `blocked`, and commits once
   * `blocked` waits for a lock of that transaction: the order of the two is then certain.
   */
  const whileHolding = async <T>(hold: (tx: pg.Client) => Promise<void>, blocked: () => Promise<T>): Promise<T> => {
    const holder = await connect(url);
    try {
      const { rows } = await holder.query(`SELECT pg_backend_pid() AS pid`);
      await holder.query('BEGIN');
      await hold(holder);
      const result = blocked();
      await waitUntil(async () => (await db.query(`SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, [rows[0].pid])).rowCount! > 0);
      await holder.query('COMMIT');
      return await result;
    } finally {
      await holder.end();
    }
  };

  it('keys nobody waits on are completed and released without a notification; a marked key is notified', async () => {
    const [completed, released, waited] = await Promise.all([claimOf(), claimOf(), claimOf()]);
    expect(await complete(completed)).toBe(true);
    expect(await store.releaseKey(released)).toBe(true);
    expect(await store.markKeyWaited(waited)).toBe(true);
    expect(await complete(waited)).toBe(true);
    await notified(waited.key);
    expect([settled.count(completed.key), settled.count(released.key)]).toEqual([0, 0]);
    expect((await keyRow(db, completed.scope, completed.key))!.has_waiters).toBe(false);
  });

  it('every path that settles a marked key notifies: completion, release, operator release, settling job', async () => {
    const settleBy: Record<string, (claim: Claim) => Promise<boolean>> = {
      completion: complete,
      release: (claim) => store.releaseKey(claim),
      'operator release': (claim) => store.releaseAbandonedKey(claim.scope, claim.key, true),
      'settling job': async (claim) => {
        await expireLease(db, claim.key);
        const taken = await store.takeOverStaleOperation(claim.operationId);
        return taken.kind === 'taken' && complete(taken.claim);
      },
    };
    for (const [path, settle] of Object.entries(settleBy)) {
      const claim = await claimOf();
      expect(await store.markKeyWaited(claim)).toBe(true);
      expect([path, await settle(claim)]).toEqual([path, true]);
      await notified(claim.key);
    }
  });

  it('a second waiter finds the key marked; a takeover keeps the mark, so its completion is notified too', async () => {
    const request = newRequest();
    const failed = await claimOf(request);
    expect(await store.markKeyWaited(request)).toBe(true);
    expect(await store.markKeyWaited(request)).toBe(false);
    await store.releaseKey(failed);
    await notified(request.key);
    expect(await store.markKeyWaited(request)).toBe(false);
    const resumed = await claimOf(request);
    expect(resumed).toMatchObject({ resumed: true, operationId: failed.operationId });
    expect(await complete(resumed)).toBe(true);
    await notified(request.key, 2);
  });

  it('the completion locks the row first: the mark waits for its commit, matches nothing, and the read finds the answer', async () => {
    const request = newRequest();
    const claim = await claimOf(request);
    const completeUncommitted = async (tx: pg.Client): Promise<void> => {
      await tx.query(COMPLETE_KEY, [claim.scope, claim.key, claim.lockToken, 201, '{}', '{}']);
    };
    expect(await whileHolding(completeUncommitted, () => store.markKeyWaited(request))).toBe(false);
    expect(await store.claimKey(request)).toMatchObject({ kind: 'replay', response: { status: 201 } });
  });

  it('the mark locks the row first: the completion waits for it and is notified at its commit', async () => {
    const request = newRequest();
    const claim = await claimOf(request);
    const markUncommitted = async (tx: pg.Client): Promise<void> => {
      expect((await tx.query(MARK_KEY_WAITED, [request.scope, request.key])).rowCount).toBe(1);
    };
    expect(await whileHolding(markUncommitted, () => complete(claim))).toBe(true);
    await notified(request.key);
  });

  it(`${RACE_ROUNDS} marks racing the settlement of their key: each ends with the settled key read or a notification, never neither`, async () => {
    const ends = { completion: { notified: 0, read: 0 }, release: { notified: 0, read: 0 } };
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const request = newRequest();
      const claim = await claimOf(request);
      const kind = round % 2 === 0 ? 'completion' : 'release';
      const settle = (): Promise<boolean> => (kind === 'completion' ? complete(claim) : store.releaseKey(claim));
      const mark = (): Promise<boolean> => store.markKeyWaited(request);
      // Both go out at once, each on a connection of the pool, in alternating order.
      const [settledOk, marked] = round % 4 < 2 ? await Promise.all([settle(), mark()]) : (await Promise.all([mark(), settle()])).reverse();
      expect(settledOk).toBe(true);
      if (marked) {
        await notified(request.key);
        ends[kind].notified++;
      } else {
        // What the waiter's read after the mark finds: the answer, or a released key to take over.
        expect((await store.claimKey(request)).kind).toBe(kind === 'completion' ? 'replay' : 'claimed');
        ends[kind].read++;
      }
    }
    console.log(`settled-notifications: of ${RACE_ROUNDS} races, marked first and notified / settled first and read: ${JSON.stringify(ends)}`);
  });
});
