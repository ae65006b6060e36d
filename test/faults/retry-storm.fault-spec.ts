import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE, BOB } from '../support/clients.js';
import { countCharges } from '../support/ledger.js';
import { nuevoPago, postPago, type HttpResult } from '../support/http.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * 50 clients, each hammering its own key with waves of concurrent duplicates, spread over two
 * service processes sharing one PostgreSQL. Real: processes, HTTP, PostgreSQL.
 */
const CLIENTS = 50;
const WAVES = 5;
const PER_WAVE = 5;

describe('a retry storm over two replicas', () => {
  let replicas: AppProcess[];
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('retry_storm');
    const first = await startAppProcess(url, { GATEWAY_LATENCY_MS: '50' });
    const second = await startAppProcess(url, { GATEWAY_LATENCY_MS: '50', DB_MIGRATIONS_RUN: 'false' });
    replicas = [first, second];
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all((replicas ?? []).map((replica) => replica.stop('SIGKILL')));
  });

  it(`${CLIENTS} clients x ${WAVES * PER_WAVE} requests on their own keys: charges equal operations, every answer a 409 or the one stored answer`, async () => {
    const operations = Array.from({ length: CLIENTS }, (_, i) => ({ client: i % 2 ? BOB : ALICE, key: randomUUID(), body: nuevoPago() }));
    const answers = await Promise.all(
      operations.map(async (operation, i) => {
        const results: HttpResult[] = [];
        for (let wave = 0; wave < WAVES; wave++) {
          const waveResults = await Promise.all(
            Array.from({ length: PER_WAVE }, (_, j) => postPago(replicas[(i + j + wave) % 2]!.baseUrl, operation)),
          );
          results.push(...waveResults);
        }
        return results;
      }),
    );

    const all = answers.flat();
    const byStatus = all.reduce<Record<number, number>>((counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }), {});
    const charges = await countCharges(db);
    console.log(`retry-storm: operations=${CLIENTS} requests=${all.length} statuses=${JSON.stringify(byStatus)} charges=${charges}`);

    expect(all.length).toBeGreaterThanOrEqual(1000);
    expect(charges).toBe(CLIENTS);
    for (const results of answers) {
      const created = results.filter((r) => r.status === 201);
      expect(created.length).toBeGreaterThan(0);
      expect(created.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
      expect(new Set(created.map((r) => r.text)).size).toBe(1);
      for (const r of results.filter((r) => r.status !== 201)) {
        expect(r.status).toBe(409);
        expect(r.json.type).toContain('idempotency-key-in-flight');
      }
    }
  });
});
