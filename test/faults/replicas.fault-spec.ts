import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { MIGRATIONS } from '../../migrations/index.js';
import { runMigrationScript, startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { expectOneExecution } from '../support/duplicate-answers.js';
import { countCharges, expireLease, keyRow, waitForClaim } from '../support/ledger.js';
import { nuevoPago, postPago, type HttpResult } from '../support/http.js';
import { RoundRobinProxy, UPSTREAM_HEADER } from '../support/round-robin-proxy.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * docker-compose.yml's topology without containers: the migration script runs once, two service
 * processes start with DB_MIGRATIONS_RUN=false on one PostgreSQL, and a round-robin proxy sits in
 * front. Real: processes, HTTP through the proxy, PostgreSQL. The gateway takes 3 s, so duplicates
 * and a kill land while the first attempt is in flight.
 */
const DUPLICATES = 20;

describe('two replicas behind a round-robin proxy', () => {
  let url: string;
  let migration: { code: number | null; output: string };
  let replicas: AppProcess[];
  let proxy: RoundRobinProxy;
  let db: pg.Client;

  beforeAll(async () => {
    url = await createTestDatabase('replicas');
    migration = await runMigrationScript('run', url);
    const env = { GATEWAY_LATENCY_MS: '3000', DB_MIGRATIONS_RUN: 'false' };
    replicas = await Promise.all([startAppProcess(url, env), startAppProcess(url, env)]);
    proxy = await RoundRobinProxy.start(replicas.map((replica) => replica.baseUrl));
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await proxy?.close();
    await Promise.all((replicas ?? []).map((replica) => replica.stop('SIGKILL')));
  });

  const upstreamOf = (result: HttpResult) => result.headers.get(UPSTREAM_HEADER);

  it('the one-shot migration applied every migration before the replicas started; running it again changes nothing', async () => {
    expect(migration).toMatchObject({ code: 0, output: expect.stringContaining('applied: ') });
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM migrations`);
    expect(rows[0].n).toBe(MIGRATIONS.length);
    expect(await runMigrationScript('run', url)).toMatchObject({ code: 0, output: expect.stringContaining('no pending migrations') });
  });

  it(`${DUPLICATES} concurrent duplicates spread over both replicas: one charge, one stored answer, every other answer a 409 or that answer`, async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const results = await Promise.all(Array.from({ length: DUPLICATES }, () => postPago(proxy.baseUrl, { client: ALICE, key, body })));

    expect(new Set(results.map(upstreamOf))).toEqual(new Set(replicas.map((replica) => replica.baseUrl)));
    const executed = expectOneExecution(results);
    expect(await countCharges(db)).toBe(charges + 1);
    expect(await keyRow(db, ALICE.clientId, key)).toMatchObject({ status: 'completed', response_status: 201, response_body: executed.text });
  });

  it('a retry that the proxy sends to the other replica gets the byte-identical stored answer', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = await postPago(proxy.baseUrl, { client: ALICE, key, body });
    const charges = await countCharges(db);
    const retry = await postPago(proxy.baseUrl, { client: ALICE, key, body });

    expect(first.status).toBe(201);
    expect(upstreamOf(retry)).not.toBe(upstreamOf(first));
    expect(retry.text).toBe(first.text);
    expect(retry.status).toBe(201);
    for (const header of ['content-type', 'location']) expect(retry.headers.get(header)).toBe(first.headers.get(header));
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await countCharges(db)).toBe(charges);
  });

  it('a replica killed mid-request: the proxy answers 502, and retries reach the survivor, which takes over once the lease expires and charges once', async () => {
    const victim = replicas.find((replica) => replica.baseUrl === proxy.nextReplica())!;
    const survivor = replicas.find((replica) => replica !== victim)!;
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const lost = postPago(proxy.baseUrl, { client: ALICE, key, body });
    await waitForClaim(db, key);
    await victim.stop('SIGKILL');
    expect((await lost).status).toBe(502);

    const tooEarly = await postPago(proxy.baseUrl, { client: ALICE, key, body });
    expect({ status: tooEarly.status, upstream: upstreamOf(tooEarly) }).toEqual({ status: 409, upstream: survivor.baseUrl });

    await expireLease(db, key);
    const recovered = await postPago(proxy.baseUrl, { client: ALICE, key, body });
    expect({ status: recovered.status, upstream: upstreamOf(recovered) }).toEqual({ status: 201, upstream: survivor.baseUrl });
    const replay = await postPago(proxy.baseUrl, { client: ALICE, key, body });
    expect(replay.text).toBe(recovered.text);
    expect(await countCharges(db)).toBe(charges + 1);
  });
});
