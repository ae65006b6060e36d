import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { countCharges, countChargesOfOrder, countPagos } from '../support/ledger.js';
import { type HttpResult, nuevoPago, postPago } from '../support/http.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * Concurrent duplicates over real HTTP against two separate service processes sharing one
 * PostgreSQL. The gateway takes 300 ms, so duplicates arrive while the first is in flight.
 */
const DUPLICATES = 20;

describe('concurrent duplicates of one payment', () => {
  let replicas: AppProcess[];
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('concurrency');
    // The first replica migrates; the second starts on the migrated schema, as in a rolling deploy.
    const first = await startAppProcess(url, { GATEWAY_LATENCY_MS: '300' });
    const second = await startAppProcess(url, { GATEWAY_LATENCY_MS: '300', DB_MIGRATIONS_RUN: 'false' });
    replicas = [first, second];
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all((replicas ?? []).map((replica) => replica.stop('SIGKILL')));
  });

  const expectExactlyOneExecution = async (results: HttpResult[], numeroOrden: string): Promise<void> => {
    const executed = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
    expect(executed).toHaveLength(1);
    for (const result of results) {
      if (result.status === 409) {
        expect(result.json.type).toContain('idempotency-key-in-flight');
        expect(result.headers.get('retry-after')).toBe('1');
      } else {
        expect(result.status).toBe(201);
        expect(result.text).toBe(executed[0]!.text);
      }
    }
    expect(await countPagos(db, 'numero_orden = $1', [numeroOrden])).toBe(1);
    expect(await countChargesOfOrder(db, numeroOrden)).toBe(1);
  };

  it('20 concurrent requests with one key on one process: one charge, every other answer a 409 or an identical replay', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const results = await Promise.all(Array.from({ length: DUPLICATES }, () => postPago(replicas[0]!.baseUrl, { client: ALICE, key, body })));
    await expectExactlyOneExecution(results, body.numeroOrden);
    expect(await countCharges(db)).toBe(charges + 1);
  });

  it('20 concurrent requests with one key spread over two processes: still exactly one charge', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const charges = await countCharges(db);
    const results = await Promise.all(
      Array.from({ length: DUPLICATES }, (_, i) => postPago(replicas[i % 2]!.baseUrl, { client: ALICE, key, body })),
    );
    await expectExactlyOneExecution(results, body.numeroOrden);
    expect(await countCharges(db)).toBe(charges + 1);
  });

  it('a duplicate that arrives while the first is in flight gets 409 with Retry-After and executes nothing', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const first = postPago(replicas[0]!.baseUrl, { client: ALICE, key, body });
    await waitForKeyRow(db, key);
    const duplicate = await postPago(replicas[1]!.baseUrl, { client: ALICE, key, body });
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(duplicate.headers.get('retry-after')).toBe('1');
    expect((await first).status).toBe(201);
    const after = await postPago(replicas[1]!.baseUrl, { client: ALICE, key, body });
    expect(after.text).toBe((await first).text);
  });

  it('different keys for one order racing: one payment is approved, the others are told the order is taken', async () => {
    const body = nuevoPago();
    const keys = Array.from({ length: 10 }, () => randomUUID());
    const results = await Promise.all(keys.map((key, i) => postPago(replicas[i % 2]!.baseUrl, { client: ALICE, key, body })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
    expect(await countCharges(db, 'amount = $1 AND operation_key IN (SELECT \'pagos-\' || operation_id FROM pagos WHERE numero_orden = $2)', [body.monto, body.numeroOrden])).toBe(1);
    // "In progress" is transient (Retry-After) and leaves no key behind; "already paid" is the key's answer for good.
    for (const [i, result] of results.entries()) {
      if (result.status !== 409) continue;
      const { rows } = await db.query(`SELECT status, response_status FROM idempotency_keys WHERE key = $1`, [keys[i]]);
      expect(rows).toEqual(result.headers.get('retry-after') === null ? [{ status: 'completed', response_status: 409 }] : []);
    }
  });
});

async function waitForKeyRow(db: pg.Client, key: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rowCount } = await db.query(`SELECT 1 FROM idempotency_keys WHERE key = $1`, [key]);
    if (rowCount) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`key ${key} was never claimed`);
}
