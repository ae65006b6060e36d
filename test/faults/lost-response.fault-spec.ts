import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { sendWithRetries } from '../../examples/client/send-with-retries.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { countCharges } from '../support/ledger.js';
import { nuevoPago, postPago } from '../support/http.js';
import { ResponseDroppingProxy } from '../support/response-dropping-proxy.js';
import { seededRandom } from '../support/seeded-random.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * The original incident, for real: the service charges and answers, a proxy cuts the connection
 * before the client reads the answer, the client retries with the same key under backoff.
 * Real: the service process, a TCP proxy on loopback, PostgreSQL, fetch.
 */
const OPERATIONS = 200;
const CONCURRENCY = 20;
const DROP_SHARE = 0.35;
const SEED = 20261202;
// Each attempt's answer is lost with DROP_SHARE: a client gives up after MAX_ATTEMPTS lost in a row,
// 0.35^10 = 3e-5 for one operation, so one of 200 in about every 200 runs (seen once); 0.35^16 = 5e-8.
const MAX_ATTEMPTS = 16;

describe('lost responses', () => {
  let service: AppProcess;
  let proxy: ResponseDroppingProxy;
  let db: pg.Client;
  const random = seededRandom(SEED);

  beforeAll(async () => {
    const url = await createTestDatabase('lost_response');
    service = await startAppProcess(url);
    proxy = await ResponseDroppingProxy.start(Number(new URL(service.baseUrl).port), () => random() < DROP_SHARE);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await proxy?.close();
    await service?.stop('SIGKILL');
  });

  it(`${OPERATIONS} payments, ${DROP_SHARE * 100}% of answers lost: every client ends with its original 201 and each payment is charged once`, async () => {
    const viaProxy = `http://127.0.0.1:${proxy.port}`;
    const operations = Array.from({ length: OPERATIONS }, () => ({ key: randomUUID(), body: nuevoPago() }));
    const outcomes = [];
    for (let start = 0; start < OPERATIONS; start += CONCURRENCY) {
      const batch = operations.slice(start, start + CONCURRENCY).map(({ key, body }) =>
        sendWithRetries(() => postPago(viaProxy, { client: ALICE, key, body, headers: { connection: 'close' } }), {
          maxAttempts: MAX_ATTEMPTS,
          baseDelayMs: 5,
          maxDelayMs: 200,
          random,
        }),
      );
      outcomes.push(...(await Promise.all(batch)));
    }

    const attempts = outcomes.reduce((sum, outcome) => sum + outcome.attempts, 0);
    const networkErrors = outcomes.reduce((sum, outcome) => sum + outcome.networkErrors, 0);
    const charges = await countCharges(db);
    console.log(
      `lost-response: operations=${OPERATIONS} attempts=${attempts} dropped=${proxy.dropped} networkErrors=${networkErrors} charges=${charges}`,
    );

    expect(proxy.dropped).toBeGreaterThan(OPERATIONS * DROP_SHARE * 0.5);
    expect(networkErrors).toBe(proxy.dropped);
    expect(charges).toBe(OPERATIONS);
    for (const [index, outcome] of outcomes.entries()) {
      const { key, body } = operations[index]!;
      expect(outcome.result?.status).toBe(201);
      const { rows } = await db.query(
        `SELECT p.id, k.response_body FROM pagos p JOIN idempotency_keys k ON k.operation_id::text = p.operation_id
          WHERE p.numero_orden = $1 AND k.key = $2`,
        [body.numeroOrden, key],
      );
      expect(rows).toHaveLength(1);
      expect(outcome.result!.json.id).toBe(rows[0].id);
      expect(outcome.result!.text).toBe(rows[0].response_body);
      expect(outcome.result!.headers.get('idempotent-replayed')).toBe(outcome.attempts > 1 ? 'true' : null);
    }
  });
});
