import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type IdempotencyStore, isClaimLost } from '../../src/idempotency/idempotency.store.js';
import type { Claim, ClaimOutcome, KeyRequest } from '../../src/idempotency/idempotency.types.js';
import { insertExpiredKeys, keyRow } from '../support/ledger.js';
import { claimKeyOf, completeOf, openStore, type StoreHarness } from '../support/idempotency-store.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';

/**
 * Every transition statement in idempotency.sql.ts, raced by N concurrent callers on real
 * PostgreSQL connections: exactly one may win. Real: the service's store, a pool, PostgreSQL.
 */
const RACERS = 20;
const LOCK_TIMEOUT_SECONDS = 60;

describe('idempotency statements under races', () => {
  let app: AppProcess;
  let harness: StoreHarness;
  let store: IdempotencyStore;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('idempotency_races');
    // The service migrates the database; the races run on a store of its own with one connection per racer.
    app = await startAppProcess(url);
    harness = await openStore(url, { poolSize: RACERS, lockTimeoutSeconds: LOCK_TIMEOUT_SECONDS });
    store = harness.store;
    db = await connect(url);
    await db.query(`CREATE TABLE test_business_writes (marker text NOT NULL)`);
    // A write as a route's first write is made: a SELECT of a function (see gatedStatement).
    await db.query(`
      CREATE FUNCTION test_write_marker(p_marker text) RETURNS TABLE (marker text) LANGUAGE sql VOLATILE AS $$
        INSERT INTO test_business_writes (marker) VALUES (p_marker) RETURNING marker
      $$`);
  });

  afterAll(async () => {
    await db?.end();
    await harness?.close();
    await app?.stop();
  });

  const newRequest = (): KeyRequest => ({ scope: 'alice', key: randomUUID(), fingerprint: 'a'.repeat(64) });
  const race = (request: KeyRequest): Promise<ClaimOutcome[]> => Promise.all(Array.from({ length: RACERS }, () => store.claimKey(request)));
  const winners = (outcomes: ClaimOutcome[]): Claim[] => outcomes.flatMap((o) => (o.kind === 'claimed' ? [o.claim] : []));
  const backdateLease = (request: KeyRequest) =>
    db.query(`UPDATE idempotency_keys SET locked_at = now() - interval '1 hour' WHERE scope = $1 AND key = $2`, [request.scope, request.key]);
  const claimOf = (request: KeyRequest): Promise<Claim> => claimKeyOf(store, request);
  const complete = (claim: Claim, body: string): Promise<boolean> => completeOf(harness, claim, body);

  it('claimKey: of 20 first requests with one key exactly one claims it, the rest see it in flight', async () => {
    const outcomes = await race(newRequest());
    expect(winners(outcomes)).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'in_flight')).toHaveLength(RACERS - 1);
  });

  it('claimKey on an expired key: exactly one racer starts a new operation over it', async () => {
    const request = newRequest();
    const old = await claimOf(request);
    await complete(old, '{"old":true}');
    await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [request.key]);
    const claims = winners(await race(request));
    expect(claims).toHaveLength(1);
    expect(claims[0]!.operationId).not.toBe(old.operationId);
    expect(claims[0]!.resumed).toBe(false);
  });

  it('takeOverKey: of 20 retries of a claim whose lease ran out exactly one takes it over, resuming its operation', async () => {
    const request = newRequest();
    const stale = await claimOf(request);
    await backdateLease(request);
    const claims = winners(await race(request));
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ resumed: true, operationId: stale.operationId });
    expect(claims[0]!.lockToken).not.toBe(stale.lockToken);
  });

  it('takeOverKey: of 20 retries of a released claim exactly one takes it over', async () => {
    const request = newRequest();
    const failed = await claimOf(request);
    await store.releaseKey(failed);
    expect((await keyRow(db, request.scope, request.key))?.status).toBe('released');
    const claims = winners(await race(request));
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ resumed: true, operationId: failed.operationId });
  });

  it('a live claim is never taken over, however many retries arrive', async () => {
    const request = newRequest();
    await claimOf(request);
    expect(winners(await race(request))).toHaveLength(0);
  });

  it('renewKey, completeKey and releaseKey of a stalled owner do nothing once its claim was taken over', async () => {
    const request = newRequest();
    const stalled = await claimOf(request);
    await backdateLease(request);
    const current = await claimOf(request);

    expect(await store.renewKey(stalled)).toBe(false);
    await store.releaseKey(stalled);
    expect(await complete(stalled, '{"from":"stalled"}')).toBe(false);
    const row = await keyRow(db, request.scope, request.key);
    expect(row).toMatchObject({ status: 'in_flight', lock_token: current.lockToken });

    expect(await store.renewKey(current)).toBe(true);
    expect(await complete(current, '{"from":"current"}')).toBe(true);
    expect(await keyRow(db, request.scope, request.key)).toMatchObject({ status: 'completed', response_body: '{"from":"current"}' });
  });

  it('completeKey: when the stalled and the current owner complete at once, only the current one is stored', async () => {
    const request = newRequest();
    const stalled = await claimOf(request);
    await backdateLease(request);
    const current = await claimOf(request);
    const results = await Promise.all([complete(stalled, '{"from":"stalled"}'), complete(current, '{"from":"current"}')]);
    expect(results).toEqual([false, true]);
    const replay = await store.claimKey(request);
    expect(replay).toEqual({ kind: 'replay', response: { status: 201, headers: {}, body: '{"from":"current"}' }, expiresInSeconds: expect.any(Number) });
  });

  it('completeKey: 20 concurrent completions by the owner store the answer exactly once', async () => {
    const claim = await claimOf(newRequest());
    const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => complete(claim, `{"n":${i}}`)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  /**
   * As the interceptor does it: a business write joins the deferred commit, then the completion goes
   * out with COMMIT in one round trip; the write is a row named `marker` of a table of this test's own.
   */
  const completeWithWrite = async (claim: Claim, marker: string): Promise<'committed' | 'claim lost'> => {
    const { transactions } = harness;
    const commit = transactions.openDeferredCommit();
    await transactions.runJoinable(
      (tx) => tx.query(`INSERT INTO test_business_writes (marker) VALUES ($1)`, [marker]),
      commit,
    );
    const outcome = await commit.commitWith((tx) => store.completeKey(tx, claim, { status: 201, headers: {}, body: `{"marker":"${marker}"}` })).then(
      () => 'committed' as const,
      (error: unknown) => (isClaimLost(error) ? ('claim lost' as const) : Promise.reject(error)),
    );
    return outcome;
  };
  const countWrites = async (where: string, params: unknown[]): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM test_business_writes WHERE ${where}`, params)).rows[0].n;
  const written = (marker: string) => countWrites('marker = $1', [marker]);

  it("completeKey pipelined with COMMIT: a stalled owner's completion aborts the transaction and its business write rolls back", async () => {
    const request = newRequest();
    const stalled = await claimOf(request);
    await backdateLease(request);
    const current = await claimOf(request);
    expect(await completeWithWrite(stalled, `stalled-${request.key}`)).toBe('claim lost');
    expect(await written(`stalled-${request.key}`)).toBe(0);
    expect(await keyRow(db, request.scope, request.key)).toMatchObject({ status: 'in_flight', lock_token: current.lockToken });
    expect(await completeWithWrite(current, `current-${request.key}`)).toBe('committed');
    expect(await written(`current-${request.key}`)).toBe(1);
    expect(await keyRow(db, request.scope, request.key)).toMatchObject({ status: 'completed', response_body: `{"marker":"current-${request.key}"}` });
  });

  it('completeKey pipelined with COMMIT: of 20 owners racing with business writes, exactly one write commits', async () => {
    const claim = await claimOf(newRequest());
    const markers = Array.from({ length: RACERS }, (_, i) => `racer-${i}-${claim.key}`);
    const outcomes = await Promise.all(markers.map((marker) => completeWithWrite(claim, marker)));
    expect(outcomes.filter((outcome) => outcome === 'committed')).toHaveLength(1);
    // Each racer's write is stored exactly when its completion was.
    expect(await countWrites('marker = ANY($1)', [markers])).toBe(1);
    expect(await written(markers[outcomes.indexOf('committed')]!)).toBe(1);
  });

  /**
   * As the interceptor does it for `claimWithFirstWrite`: the claim as the gate of the handler's first
   * write (a row named `marker`), one statement, with COMMIT behind it, all in one round trip.
   */
  const claimWithWrite = async (request: KeyRequest, marker: string) => {
    const { transactions } = harness;
    const claim: Claim = { ...request, lockToken: randomUUID(), operationId: randomUUID(), resumed: false };
    const commit = transactions.openDeferredCommit();
    const { gateRow } = commit.startWith(store.claimGate(claim));
    const wrote = await transactions.runFirst((tx) => tx.query(`SELECT * FROM test_write_marker($1)`, [marker]), commit).then(
      () => true,
      () => false,
    );
    return { outcome: await store.outcomeOfGate(claim, await gateRow), wrote, committed: await commit.gatePassed };
  };

  it('a claim sent with the first write: of 20 first requests with one key exactly one claims it and writes; the others see it in flight and write nothing', async () => {
    const request = newRequest();
    const markers = Array.from({ length: RACERS }, (_, i) => `first-write-${i}-${request.key}`);
    const results = await Promise.all(markers.map((marker) => claimWithWrite(request, marker)));
    const won = results.filter((result) => result.committed);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ wrote: true, outcome: { kind: 'claimed', origin: 'new_key' } });
    expect(results.filter((result) => !result.committed).map((result) => [result.wrote, result.outcome?.kind])).toEqual(
      Array.from({ length: RACERS - 1 }, () => [false, 'in_flight']),
    );
    expect(await countWrites('marker = ANY($1)', [markers])).toBe(1);
    expect(await keyRow(db, request.scope, request.key)).toMatchObject({ status: 'in_flight', lock_token: (won[0]!.outcome as { claim: Claim }).claim.lockToken });
  });

  it('a claim sent with the first write on a completed key: the outcome is the replay and the write is not made', async () => {
    const request = newRequest();
    await complete(await claimOf(request), '{"first":true}');
    const result = await claimWithWrite(request, `replayed-${request.key}`);
    expect(result).toEqual({
      outcome: { kind: 'replay', response: { status: 201, headers: {}, body: '{"first":true}' }, expiresInSeconds: expect.any(Number) }, wrote: false, committed: false,
    });
    expect(await written(`replayed-${request.key}`)).toBe(0);
  });

  it('a claim sent with a first write that fails: the claim rolls back with it and leaves no key', async () => {
    const request = newRequest();
    const commit = harness.transactions.openDeferredCommit();
    const claim: Claim = { ...request, lockToken: randomUUID(), operationId: randomUUID(), resumed: false };
    const { gateRow } = commit.startWith(store.claimGate(claim));
    await expect(harness.transactions.runFirst((tx) => tx.query(`SELECT 1 / 0`), commit)).rejects.toThrow(/division by zero/);
    expect(await gateRow).toBeUndefined();
    expect(await commit.gatePassed).toBe(false);
    expect(await keyRow(db, request.scope, request.key)).toBeUndefined();
  });

  it('a claim sent with the first write over an expired key: of 20 racers exactly one starts a new operation and writes', async () => {
    const request = newRequest();
    await complete(await claimOf(request), '{"old":true}');
    await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [request.key]);
    const markers = Array.from({ length: RACERS }, (_, i) => `over-expired-${i}-${request.key}`);
    const results = await Promise.all(markers.map((marker) => claimWithWrite(request, marker)));
    expect(results.filter((result) => result.committed).map((result) => result.outcome)).toEqual([expect.objectContaining({ kind: 'claimed', origin: 'expired_key' })]);
    expect(await countWrites('marker = ANY($1)', [markers])).toBe(1);
  });

  it('purgeExpiredKeys: two replicas purging side by side delete every expired key exactly once and no live one', async () => {
    await db.query(`DELETE FROM idempotency_keys`);
    const expired = 5_000;
    await insertExpiredKeys(db, expired, 'expired-', 'purge');
    const live = newRequest();
    await claimOf(live);
    const job = harness.purgeJob;
    const [first, second] = await Promise.all([job.purgeOnce(), job.purgeOnce()]);
    expect(first + second).toBe(expired);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM idempotency_keys`);
    expect(rows[0].n).toBe(1);
    expect(await keyRow(db, live.scope, live.key)).toBeDefined();
  });

  it('takeOverStaleOperation: of 20 settlers of an abandoned operation exactly one takes its claim, the rest find it held', async () => {
    const request = newRequest();
    const abandoned = await claimOf(request);
    await backdateLease(request);
    const outcomes = await Promise.all(Array.from({ length: RACERS }, () => store.takeOverStaleOperation(abandoned.operationId)));
    const taken = outcomes.flatMap((o) => (o.kind === 'taken' ? [o.claim] : []));
    expect(taken).toHaveLength(1);
    expect(taken[0]).toMatchObject({ scope: request.scope, key: request.key, fingerprint: request.fingerprint, operationId: abandoned.operationId });
    expect(outcomes.filter((o) => o.kind === 'held')).toHaveLength(RACERS - 1);
    // The settler owns it like any owner: a stalled original can't complete, the settler can.
    expect(await complete(abandoned, '{"from":"stalled"}')).toBe(false);
    expect(await complete(taken[0]!, '{"from":"settler"}')).toBe(true);
  });

  it('takeOverStaleOperation: a settler and 20 client retries racing for a released claim — exactly one wins', async () => {
    const request = newRequest();
    const failed = await claimOf(request);
    await store.releaseKey(failed);
    const [settler, ...retries] = await Promise.all([store.takeOverStaleOperation(failed.operationId), ...Array.from({ length: RACERS }, () => store.claimKey(request))]);
    expect((settler!.kind === 'taken' ? 1 : 0) + winners(retries as ClaimOutcome[]).length).toBe(1);
  });

  it('takeOverStaleOperation: a live lease is held, and an operation without a live key is unclaimed', async () => {
    const live = await claimOf(newRequest());
    expect(await store.takeOverStaleOperation(live.operationId)).toEqual({ kind: 'held' });
    expect(await store.takeOverStaleOperation(randomUUID())).toEqual({ kind: 'unclaimed' });
    const request = newRequest();
    const expired = await claimOf(request);
    await backdateLease(request);
    await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [request.key]);
    expect(await store.takeOverStaleOperation(expired.operationId)).toEqual({ kind: 'unclaimed' });
  });

  it('releaseAbandonedKey: of 20 operators releasing an abandoned key exactly one does; a live lease needs force', async () => {
    const request = newRequest();
    await claimOf(request);
    expect(await store.releaseAbandonedKey(request.scope, request.key, false)).toBe(false);
    await backdateLease(request);
    const results = await Promise.all(Array.from({ length: RACERS }, () => store.releaseAbandonedKey(request.scope, request.key, false)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await keyRow(db, request.scope, request.key)).toMatchObject({ status: 'released', lock_token: null });
  });

  it('releaseAbandonedKey with force: the live owner loses the claim, its completion stores nothing, and a retry resumes the operation', async () => {
    const request = newRequest();
    const owner = await claimOf(request);
    expect(await store.releaseAbandonedKey(request.scope, request.key, true)).toBe(true);
    expect(await complete(owner, '{"from":"owner"}')).toBe(false);
    expect(await claimOf(request)).toMatchObject({ resumed: true, operationId: owner.operationId });
  });

  it('a claim renewed 55 s ago, inside the 60 s lock timeout, is not taken over', async () => {
    const request = newRequest();
    await claimOf(request);
    await db.query(`UPDATE idempotency_keys SET locked_at = now() - make_interval(secs => $2::int - 5) WHERE key = $1`, [
      request.key,
      LOCK_TIMEOUT_SECONDS,
    ]);
    expect(winners(await race(request))).toHaveLength(0);
  });
});
