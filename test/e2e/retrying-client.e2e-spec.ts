import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type FetchLike, type PagoRequest, type PagosAnswer, PagosClient } from '../../examples/client/pagos-client.js';
import { pay, type PayDependencies, resumePending } from '../../examples/client/pay.js';
import { PendingOperationsFile } from '../../examples/client/pending-operations.js';
import type { AttemptReport } from '../../examples/client/send-with-retries.js';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { embeddedProcessorUrlOf } from '../support/autenticacion.js';
import { ALICE } from '../support/clients.js';
import { checkedFetch, nuevoPago, postPago } from '../support/http.js';
import { runNodeScript, type ScriptResult } from '../support/node-script.js';
import { countChargesOfOrder, keyRow } from '../support/ledger.js';
import { ResponseDroppingProxy } from '../support/response-dropping-proxy.js';
import { seededRandom } from '../support/seeded-random.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

// The clients' pending-operations files, each in a folder of its own under this one, removed after this file's tests.
const pendingRoot = mkdtempSync(path.join(tmpdir(), 'pagos-client-'));
afterAll(() => rmSync(pendingRoot, { recursive: true, force: true }));
function pendingFile(prefix: string): string {
  return path.join(mkdtempSync(path.join(pendingRoot, prefix)), 'pending.json');
}

/**
 * The example client of `examples/client/` driven against the real service. Real: the built service
 * as its own processes, PostgreSQL, HTTP over loopback, the client's pending-operations file on disk,
 * a TCP proxy that drops answers and one that cuts the database. Injected: the client's sleep, which
 * records each delay and returns once the state the client waits for is reached (never a timer).
 * The built command line runs on its own timers; its 3-D Secure cases use the embedded local
 * processor's challenge route, and the one that waits out `--esperar-s 1` takes that second.
 */
describe('the example retrying client against the running service', () => {
  let url: string;
  let db: pg.Client;
  let databaseProxy: TcpProxy;
  let service: AppProcess;
  // A processor that takes 1.5 s, so that a second request finds the first one still in flight.
  let slowService: AppProcess;

  beforeAll(async () => {
    url = await createTestDatabase('retrying_client');
    const { proxy, viaProxy } = await TcpProxy.inFrontOf(url);
    databaseProxy = proxy;
    service = await startAppProcess(viaProxy);
    slowService = await startAppProcess(url, { GATEWAY_LATENCY_MS: '1500', DB_MIGRATIONS_RUN: 'false' });
    db = await connect(url);
  });

  afterEach(async () => {
    if (databaseProxy?.isCut) await databaseProxy.restore();
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all([service?.stop('SIGKILL'), slowService?.stop('SIGKILL')]);
    await databaseProxy?.cut();
  });

  const chargesOf = (pago: PagoRequest) =>
    countChargesOfOrder(db, pago.numeroOrden);

  /** A client as `npm run client` builds it, on its own pending file, recording its attempts and sleeps. */
  function harness(
    baseUrl: string,
    options: { fetch?: FetchLike; maxAttempts?: number; sleep?: (ms: number) => Promise<void>; waitSeconds?: number } = {},
  ) {
    const file = pendingFile('harness-');
    const attempts: AttemptReport<PagosAnswer>[] = [];
    const sleeps: number[] = [];
    const dependencies: PayDependencies = {
      client: new PagosClient({ baseUrl, apiToken: ALICE.token, timeoutMs: 15_000, waitSeconds: options.waitSeconds, fetch: options.fetch ?? checkedFetch }),
      pending: new PendingOperationsFile(file),
      policy: { maxAttempts: options.maxAttempts ?? 6, baseDelayMs: 100, maxDelayMs: 2_000, random: seededRandom(11) },
      sleep: async (ms) => {
        sleeps.push(ms);
        await options.sleep?.(ms);
      },
      onAttempt: (report) => attempts.push(report),
    };
    return { file, attempts, sleeps, dependencies };
  }

  it('pays in one attempt when nothing goes wrong, and forgets the key once the 201 arrived', async () => {
    const pago = nuevoPago();
    const { dependencies, sleeps } = harness(service.baseUrl);

    const outcome = await pay(pago, dependencies);

    expect(outcome).toMatchObject({ final: true, resumed: false, attempts: 1, networkErrors: 0 });
    expect(outcome.result!.status).toBe(201);
    expect(outcome.result!.headers.get('idempotent-replayed')).toBeNull();
    expect(sleeps).toEqual([]);
    expect((await keyRow(db, ALICE.clientId, outcome.idempotencyKey))?.status).toBe('completed');
    expect(await chargesOf(pago)).toBe(1);
    expect(dependencies.pending.list()).toEqual([]);
  });

  it('a lost answer: the retry with the same key gets the stored 201 byte for byte, Idempotent-Replayed, and one charge', async () => {
    let connections = 0;
    const proxy = await ResponseDroppingProxy.start(Number(new URL(service.baseUrl).port), () => connections++ === 0);
    const sentKeys: string[] = [];
    const recordingFetch: FetchLike = (url, init) => {
      sentKeys.push(new Headers(init.headers).get('idempotency-key')!);
      return fetch(url, init);
    };
    const pago = nuevoPago();
    const { dependencies, attempts } = harness(`http://127.0.0.1:${proxy.port}`, { fetch: recordingFetch });
    try {
      const outcome = await pay(pago, dependencies);

      expect(proxy.dropped).toBe(1);
      expect(attempts.map(({ answer, error }) => answer?.status ?? error?.name)).toEqual(['TypeError', 201]);
      expect(outcome).toMatchObject({ final: true, attempts: 2, networkErrors: 1 });
      expect(sentKeys).toEqual([outcome.idempotencyKey, outcome.idempotencyKey]);
      const stored = await keyRow(db, ALICE.clientId, outcome.idempotencyKey);
      expect(outcome.result!.headers.get('idempotent-replayed')).toBe('true');
      expect(outcome.result!.text).toBe(stored!.response_body);
      expect(outcome.result!.json).toMatchObject({ numeroOrden: pago.numeroOrden, estado: 'APROBADO' });
      expect(await chargesOf(pago)).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('an app killed before it read the answer: the key was on disk before the first attempt, and the next launch resumes it', async () => {
    const pago = nuevoPago();
    const seenOnDisk: (string | undefined)[] = [];
    const dyingFetch: FetchLike = async (url, init) => {
      seenOnDisk.push(new PendingOperationsFile(first.file).find(pago.numeroOrden)?.idempotencyKey);
      await (await checkedFetch(url, init)).text();
      throw new Error('the app was killed before it read the answer');
    };
    const first = harness(service.baseUrl, { fetch: dyingFetch, maxAttempts: 1 });
    const died = await pay(pago, first.dependencies);
    expect(died).toMatchObject({ final: false, attempts: 1, result: undefined });
    expect(seenOnDisk).toEqual([died.idempotencyKey]);
    expect(await chargesOf(pago)).toBe(1);

    // The next launch: a new client, a new file object on the same path, no memory of the first run.
    const relaunched = harness(service.baseUrl);
    const [resumed, ...others] = await resumePending({ ...relaunched.dependencies, pending: new PendingOperationsFile(first.file) });

    expect(others).toEqual([]);
    expect(resumed).toMatchObject({ idempotencyKey: died.idempotencyKey, resumed: true, final: true, attempts: 1 });
    expect(resumed!.result!.status).toBe(201);
    expect(resumed!.result!.headers.get('idempotent-replayed')).toBe('true');
    expect(resumed!.result!.text).toBe((await keyRow(db, ALICE.clientId, died.idempotencyKey))!.response_body);
    expect(await chargesOf(pago)).toBe(1);
    expect(new PendingOperationsFile(first.file).list()).toEqual([]);
  });

  it('a retry while the first attempt still runs sends Prefer: wait=10 and gets that attempt\'s 201 in one attempt, no sleep', async () => {
    const pago = nuevoPago();
    const key = randomUUID();
    const firstRequest = postPago(slowService.baseUrl, { client: ALICE, key, body: pago });
    await waitUntil(async () => (await keyRow(db, ALICE.clientId, key))?.status === 'in_flight');
    const prefers: Array<string | null> = [];
    const recordingFetch: FetchLike = (url, init) => {
      prefers.push(new Headers(init.headers).get('prefer'));
      return checkedFetch(url, init);
    };
    // The client's pending file already holds the operation, as after a first attempt that timed out.
    const { dependencies, attempts, sleeps } = harness(slowService.baseUrl, { fetch: recordingFetch });
    dependencies.pending.remember({ idempotencyKey: key, pago, createdAt: new Date().toISOString() });

    const outcome = await pay(pago, dependencies);

    expect(prefers).toEqual(['wait=10']);
    expect(attempts.map(({ answer }) => answer?.status)).toEqual([201]);
    expect(sleeps).toEqual([]);
    expect(outcome.result!.headers.get('idempotent-replayed')).toBe('true');
    expect(outcome.result!.headers.get('preference-applied')).toBe('wait=10');
    expect(outcome.result!.text).toBe((await firstRequest).text);
    expect(await chargesOf(pago)).toBe(1);
  });

  it('a 409 in flight (a client that does not ask to wait): it waits at least Retry-After, then gets the first request\'s 201', async () => {
    const pago = nuevoPago();
    const key = randomUUID();
    const firstRequest = postPago(slowService.baseUrl, { client: ALICE, key, body: pago });
    await waitUntil(async () => (await keyRow(db, ALICE.clientId, key))?.status === 'in_flight');
    // The client's pending file already holds the operation, as after a first attempt that timed out.
    const { dependencies, attempts, sleeps } = harness(slowService.baseUrl, { waitSeconds: 0, sleep: async () => void (await firstRequest) });
    dependencies.pending.remember({ idempotencyKey: key, pago, createdAt: new Date().toISOString() });

    const outcome = await pay(pago, dependencies);

    const [inFlight] = attempts;
    expect(inFlight!.answer!.status).toBe(409);
    expect(inFlight!.answer!.json).toMatchObject({ type: expect.stringContaining('idempotency-key-in-flight') });
    expect(inFlight!.answer!.headers.get('retry-after')).toBe('1');
    expect(inFlight!.decision).toMatchObject({ retry: true, retryAfterMs: 1_000 });
    expect(sleeps[0]).toBeGreaterThanOrEqual(1_000);
    expect(outcome).toMatchObject({ idempotencyKey: key, resumed: true, final: true, attempts: 2 });
    expect(outcome.result!.status).toBe(201);
    expect(outcome.result!.headers.get('idempotent-replayed')).toBe('true');
    expect(outcome.result!.text).toBe((await firstRequest).text);
    expect(await chargesOf(pago)).toBe(1);
  });

  it('a 503 while the database is away is retried after its Retry-After, with the same key, and pays once', async () => {
    const pago = nuevoPago();
    await databaseProxy.cut();
    const { dependencies, attempts, sleeps } = harness(service.baseUrl, {
      sleep: async () => (databaseProxy.isCut ? databaseProxy.restore() : undefined),
    });

    const outcome = await pay(pago, dependencies);

    expect(attempts[0]!.answer!.status).toBe(503);
    expect(attempts[0]!.answer!.headers.get('retry-after')).toBe('2');
    expect(sleeps[0]).toBeGreaterThanOrEqual(2_000);
    expect(outcome.final).toBe(true);
    expect(outcome.result!.status).toBe(201);
    expect(outcome.result!.headers.get('idempotent-replayed')).toBeNull();
    expect(await chargesOf(pago)).toBe(1);
    expect(dependencies.pending.list()).toEqual([]);
  });

  it.each([
    ['400 validation-failed', async () => ({ pago: nuevoPago({ moneda: 'eur' }) }), 400, 'validation-failed'],
    [
      '409 orden-ya-pagada (a stored business answer)',
      async () => {
        const pago = nuevoPago();
        expect((await postPago(service.baseUrl, { client: ALICE, key: randomUUID(), body: pago })).status).toBe(201);
        return { pago };
      },
      409,
      'orden-ya-pagada',
    ],
    [
      '422 idempotency-key-reused',
      async () => {
        const key = randomUUID();
        const pago = nuevoPago();
        expect((await postPago(service.baseUrl, { client: ALICE, key, body: { ...pago, monto: 100 } })).status).toBe(201);
        return { pago, key };
      },
      422,
      'idempotency-key-reused',
    ],
  ])('a %s is final: one attempt, no sleep, the key forgotten', async (_name, setUp, status, type) => {
    const { pago, key } = (await setUp()) as { pago: PagoRequest; key?: string };
    const { dependencies, sleeps } = harness(service.baseUrl);
    if (key) dependencies.pending.remember({ idempotencyKey: key, pago, createdAt: new Date().toISOString() });
    const chargesBefore = await chargesOf(pago);

    const outcome = await pay(pago, dependencies);

    expect(outcome).toMatchObject({ final: true, attempts: 1, networkErrors: 0 });
    expect(outcome.result!.status).toBe(status);
    expect(outcome.result!.json).toMatchObject({ type: expect.stringContaining(type) });
    expect(sleeps).toEqual([]);
    expect(dependencies.pending.list()).toEqual([]);
    expect(await chargesOf(pago)).toBe(chargesBefore);
  });
  it('the pending file is its owner\'s only (0600), also when an older one was readable by others', async () => {
    const { file, dependencies } = harness(service.baseUrl);
    const modeOf = (): number => statSync(file).mode & 0o777;
    const first = nuevoPago();
    dependencies.pending.remember({ idempotencyKey: randomUUID(), pago: first, createdAt: new Date().toISOString() });
    expect(modeOf()).toBe(0o600);

    chmodSync(file, 0o644);
    dependencies.pending.remember({ idempotencyKey: randomUUID(), pago: nuevoPago(), createdAt: new Date().toISOString() });
    expect(modeOf()).toBe(0o600);
    chmodSync(file, 0o644);
    dependencies.pending.forget(first.numeroOrden);
    expect(modeOf()).toBe(0o600);
  });

  describe('as `npm run client` runs it (the built command line)', () => {
    const CLIENT = path.resolve('dist-examples/examples/client/main.js');

    beforeAll(() => {
      // What `npm run client` runs first: builds dist-examples/ unless it is up to date.
      const built = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', 'examples'], { encoding: 'utf8' });
      expect({ status: built.status, stderr: built.stderr }).toMatchObject({ status: 0 });
    });

    const client = (...args: string[]): Promise<ScriptResult> => runNodeScript(CLIENT, [...args, '--api-token', ALICE.token]);

    it('pending says so when nothing is pending, lists a payment left without a final answer, and resume pays it once', async () => {
      const store = pendingFile('cli-');
      expect(await client('pending', '--store', store)).toEqual({ code: 0, stdout: `nothing pending in ${store}\n`, stderr: '' });

      const pago = nuevoPago();
      const order = ['--orden', pago.numeroOrden, '--monto', String(pago.monto), '--moneda', pago.moneda, '--token', pago.token];
      // Nothing listens on port 1: one attempt, no answer, the key kept.
      const unanswered = await client('pay', ...order, '--store', store, '--base-url', 'http://127.0.0.1:1', '--max-attempts', '1');
      expect(unanswered.code).toBe(2);
      expect(unanswered.stdout).toContain(`kept in ${store}`);
      expect(statSync(store).mode & 0o777).toBe(0o600);
      const listed = await client('pending', '--store', store);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`^${pago.numeroOrden}  key [0-9a-f-]{36}  since \\S+\\n$`));

      const resumed = await client('resume', '--store', store, '--base-url', service.baseUrl);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toMatch(/final answer: 201 Created/);
      expect(await chargesOf(pago)).toBe(1);
      expect((await client('pending', '--store', store)).stdout).toBe(`nothing pending in ${store}\n`);
    });

    describe('a card that needs 3-D Secure: the 202, the challenge at the embedded local processor, the wait for the outcome', () => {
      const payNeedingAuthentication = async (...extra: string[]) => {
        const pago = nuevoPago({ token: 'pm_card_authenticationRequired' });
        const store = pendingFile('3ds-');
        const result = await client(
          'pay', '--orden', pago.numeroOrden, '--monto', String(pago.monto), '--moneda', pago.moneda, '--token', pago.token,
          '--store', store, '--base-url', service.baseUrl, '--procesador', embeddedProcessorUrlOf(service), ...extra,
        );
        return { pago, result, pending: new PendingOperationsFile(store).list() };
      };

      it('--autenticar ok: the 202 and its key forgotten, the challenge passed, APROBADO printed, exit 0, one charge', async () => {
        const { pago, result, pending } = await payNeedingAuthentication('--autenticar', 'ok');

        expect(result).toMatchObject({ code: 0, stderr: '' });
        expect(result.stdout).toMatch(/^attempt 1: 202 Accepted -> final-answer$/m);
        expect(result.stdout).toMatch(/^a real app hands autenticacion\.clientSecret to Stripe's SDK \(handleNextAction\)/m);
        expect(result.stdout).toMatch(/^payment [0-9a-f-]{36}: APROBADO$/m);
        expect(pending).toEqual([]);
        expect(await chargesOf(pago)).toBe(1);
      });

      it('--autenticar falla: RECHAZADO with motivo autenticacion printed, exit 1, nothing charged', async () => {
        const { pago, result } = await payNeedingAuthentication('--autenticar', 'falla');

        expect(result).toMatchObject({ code: 1, stderr: '' });
        expect(result.stdout).toMatch(/^payment [0-9a-f-]{36}: RECHAZADO \(motivo autenticacion\)$/m);
        expect(result.stdout).toContain('"motivo":"autenticacion"');
        expect(await chargesOf(pago)).toBe(0);
      });

      it('nobody authenticates within --esperar-s: the payment still waits, exit 3, the key forgotten all the same', async () => {
        const { pago, result, pending } = await payNeedingAuthentication('--esperar-s', '1');

        expect(result).toMatchObject({ code: 3, stderr: '' });
        expect(result.stdout).toMatch(/^payment [0-9a-f-]{36} still REQUIERE_AUTENTICACION after 1 s; it waits for its customer until \S+: read it later with GET \/pagos\/[0-9a-f-]{36}$/m);
        expect(pending).toEqual([]);
        expect(await chargesOf(pago)).toBe(0);
      });
    });
  });
});
