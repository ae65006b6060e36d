import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ALICE } from '../support/clients.js';
import { type HttpResult, nuevoPago, postPago, postReembolso } from '../support/http.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { type ProcessorProcess, startProcessorProcess } from '../support/processor-process.js';
import { RoundTripProxy } from '../support/round-trip-proxy.js';
import { createTestDatabase } from '../support/test-database.js';

// The API's pool (src/database/data-source-options.ts); the job queue and the listener have their own names.
const API_CONNECTIONS = 'pagos';
const SAMPLES = 5;
// Long enough for the previous request's out-of-band work (its webhook fan-out) to be over.
const QUIET_MS = 1_500;

/**
 * What a request costs in PostgreSQL round trips, counted on the wire between the service and the
 * database while the request is answered (the processor has its own database). The median of a few
 * requests, each after a quiet moment, so a scheduled job that happens to run alongside doesn't count.
 */
describe('round trips to PostgreSQL per request (real app, real connection)', () => {
  let app: AppProcess;
  let processor: ProcessorProcess;
  let proxy: RoundTripProxy;

  beforeAll(async () => {
    processor = await startProcessorProcess(await createTestDatabase('round_trips_processor'));
    proxy = await RoundTripProxy.inFrontOf(await createTestDatabase('round_trips'));
    app = await startAppProcess(proxy.databaseUrl, { ...processor.serviceEnv, PAGOS_RECONCILE_CRON: '0 0 1 1 *', IDEMPOTENCY_PURGE_CRON: '0 0 1 1 *' });
    // Every statement is prepared once per connection: the first requests pay for that, not these.
    for (let warmUp = 0; warmUp < 3; warmUp++) await refund(await pay());
  });

  afterAll(async () => {
    await app?.stop();
    await proxy?.close();
    await processor?.stop();
  });

  async function pay(key = randomUUID(), body = nuevoPago()): Promise<string> {
    const answer = await postPago(app.baseUrl, { client: ALICE, key, body });
    expect(answer.status).toBe(201);
    return answer.json.id as string;
  }

  async function refund(pagoId: string): Promise<HttpResult> {
    const answer = await postReembolso(app.baseUrl, pagoId, { client: ALICE, key: randomUUID(), body: { monto: 100 } });
    expect(answer.status).toBe(201);
    return answer;
  }

  /** `prepare` makes each sample's request, uncounted; its out-of-band work is over before the count starts. */
  async function medianRoundTrips(prepare: () => Promise<() => Promise<unknown>>): Promise<number> {
    const samples: number[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      const request = await prepare();
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      const before = proxy.roundTrips(API_CONNECTIONS);
      await request();
      samples.push(proxy.roundTrips(API_CONNECTIONS) - before);
    }
    console.log(`round trips: ${samples.join(', ')}`);
    return samples.sort((a, b) => a - b)[Math.floor(SAMPLES / 2)]!;
  }

  it('a first payment costs at most 3: the claim with the start, the intent recorded, settled with its event and answer', async () => {
    expect(await medianRoundTrips(async () => () => pay())).toBeLessThanOrEqual(3);
  });

  it('a refund costs at most 3: the claim, the reservation, settled with its event and answer', async () => {
    const pagoId = await pay();
    expect(await medianRoundTrips(async () => () => refund(pagoId))).toBeLessThanOrEqual(3);
  });

  it('a replay costs 1: the first retry of a key reads it (its next ones are answered from memory, see replay-cache.e2e)', async () => {
    const firstRetry = async () => {
      const key = randomUUID();
      const body = nuevoPago();
      await pay(key, body);
      return () => pay(key, body);
    };
    expect(await medianRoundTrips(firstRetry)).toBe(1);
  });
});
