import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { chargesOfPagoSql, countCharges, keyRow } from '../support/ledger.js';
import { nuevoPago, postPago } from '../support/http.js';
import { startProcessorProcess } from '../support/processor-process.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * Claims that are never completed: the owning process is killed or frozen mid-request. Real: two
 * service processes, SIGKILL/SIGSTOP, PostgreSQL. Leases are expired by backdating `locked_at`.
 */
describe('recovering claims left by a dead or stalled attempt', () => {
  let url: string;
  let db: pg.Client;
  let survivor: AppProcess;
  const victims: AppProcess[] = [];

  beforeAll(async () => {
    url = await createTestDatabase('recovery');
    survivor = await startAppProcess(url);
    db = await connect(url);
  });

  afterEach(async () => {
    await Promise.all(victims.splice(0).map((victim) => victim.stop('SIGKILL')));
  });

  afterAll(async () => {
    await db?.end();
    await survivor?.stop('SIGKILL');
  });

  const startVictim = async (env: Record<string, string>): Promise<AppProcess> => {
    const victim = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false', ...env });
    victims.push(victim);
    return victim;
  };
  const expireLease = (key: string) => db.query(`UPDATE idempotency_keys SET locked_at = now() - interval '1 hour' WHERE key = $1`, [key]);
  const pagoOf = async (numeroOrden: string) => (await db.query(`SELECT * FROM pagos WHERE numero_orden = $1`, [numeroOrden])).rows;

  it.each([
    ['after the gateway charged', `pagos p WHERE p.operation_id = (SELECT operation_id::text FROM idempotency_keys WHERE key = $1) AND ${chargesOfPagoSql('p')} > 0`],
    ['before the gateway charged', 'pagos WHERE operation_id = (SELECT operation_id::text FROM idempotency_keys WHERE key = $1)'],
  ])('a process killed %s: a retry after the lock timeout takes over and the operation is charged exactly once', async (_when, marker) => {
    const victim = await startVictim({ GATEWAY_LATENCY_MS: '3000' });
    const key = randomUUID();
    const body = nuevoPago();
    const lost = postPago(victim.baseUrl, { client: ALICE, key, body });
    await waitUntil(db, `SELECT 1 FROM ${marker}`, [key]);
    await victim.stop('SIGKILL');
    await expect(lost).rejects.toThrow('fetch failed');

    const tooEarly = await postPago(survivor.baseUrl, { client: ALICE, key, body });
    expect(tooEarly.status).toBe(409);

    await expireLease(key);
    const recovered = await postPago(survivor.baseUrl, { client: ALICE, key, body });
    expect(recovered.status).toBe(201);
    const [pago] = await pagoOf(body.numeroOrden);
    expect(pago).toMatchObject({ estado: 'APROBADO', id: recovered.json.id });
    expect(await countCharges(db, `operation_key = $1`, [`pagos-${pago.operation_id}`])).toBe(1);

    const replay = await postPago(survivor.baseUrl, { client: ALICE, key, body });
    expect(replay.text).toBe(recovered.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a stalled first attempt that wakes after a takeover neither charges again nor overwrites the stored answer', async () => {
    // The processor is a process of its own, as Stripe is: freezing the victim doesn't freeze a call
    // it has under way there. (An embedded one would hold that call's key, and the takeover's same
    // call would be answered "in use" for as long as the victim sleeps: a 503, whenever the freeze
    // lands after the victim reached the processor, a few milliseconds after its claim.)
    const processor = await startProcessorProcess(url, { GATEWAY_LATENCY_MS: '1000' });
    try {
      const victim = await startVictim({ ...processor.serviceEnv });
      const rescuer = await startVictim({ ...processor.serviceEnv });
      const key = randomUUID();
      const body = nuevoPago();
      const stalled = postPago(victim.baseUrl, { client: ALICE, key, body });
      await waitUntil(db, `SELECT 1 FROM idempotency_keys WHERE key = $1`, [key]);
      victim.child.kill('SIGSTOP');
      try {
        await waitUntil(db, PROCESSOR_CALLS_ANSWERED, [key]);
        await expireLease(key);
        const takeover = await postPago(rescuer.baseUrl, { client: ALICE, key, body });
        expect(takeover.status).toBe(201);
      } finally {
        victim.child.kill('SIGCONT');
      }
      const woken = await stalled;
      expect(woken.status).toBe(409);
      expect(woken.json.type).toContain('idempotency-key-in-flight');

      const [pago] = await pagoOf(body.numeroOrden);
      expect(await countCharges(db, `operation_key = $1`, [`pagos-${pago.operation_id}`])).toBe(1);
      const replay = await postPago(rescuer.baseUrl, { client: ALICE, key, body });
      expect(replay.json.id).toBe(pago.id);
    } finally {
      await processor.stop('SIGKILL');
    }
  });

  it('the payment row and the completed key commit together: a completion that loses its claim rolls the payment back', async () => {
    // Every committed write of the route's close (pagos_cerrar), by order.
    await db.query(`
      CREATE TABLE IF NOT EXISTS recovery_closes (numero_orden text NOT NULL);
      CREATE OR REPLACE FUNCTION recovery_record_close() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_query() LIKE '%pagos_cerrar%' THEN INSERT INTO recovery_closes VALUES (NEW.numero_orden); END IF;
        RETURN NEW;
      END $$;
      CREATE OR REPLACE TRIGGER recovery_record_close AFTER UPDATE ON pagos FOR EACH ROW EXECUTE FUNCTION recovery_record_close();`);
    const victim = await startVictim({ GATEWAY_LATENCY_MS: '1000' });
    const key = randomUUID();
    const body = nuevoPago();
    const attempt = postPago(victim.baseUrl, { client: ALICE, key, body });
    await waitUntil(db, `SELECT 1 FROM idempotency_keys WHERE key = $1`, [key]);
    // Another owner appears (as after a takeover) while the gateway call is under way.
    const intruder = randomUUID();
    await db.query(`UPDATE idempotency_keys SET lock_token = $2 WHERE key = $1`, [key, intruder]);
    expect((await attempt).status).toBe(409);

    // The route's close rolled back with its completion. (The processor's webhook may decide the payment
    // since: that is a write of its own, in a transaction of its own, and not the route's.)
    const { rows: closes } = await db.query(`SELECT 1 FROM recovery_closes WHERE numero_orden = $1`, [body.numeroOrden]);
    expect(closes).toEqual([]);
    expect(await keyRow(db, 'alice', key)).toMatchObject({ status: 'in_flight', lock_token: intruder, response_body: null });
  });

  it('a live request renews its lease, so a retry during a slow gateway call is not taken over', async () => {
    const victim = await startVictim({ GATEWAY_LATENCY_MS: '4000', IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: '2' });
    const key = randomUUID();
    const body = nuevoPago();
    const slow = postPago(victim.baseUrl, { client: ALICE, key, body });
    await waitUntil(db, `SELECT 1 FROM idempotency_keys WHERE key = $1`, [key]);
    // Past the 2 s lock timeout: without renewal, the claim would be up for takeover now.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const { rows } = await db.query(`SELECT now() - locked_at < interval '2 seconds' AS fresh FROM idempotency_keys WHERE key = $1`, [key]);
    expect(rows[0].fresh).toBe(true);
    const retry = await postPago(victim.baseUrl, { client: ALICE, key, body });
    expect(retry.status).toBe(409);
    const first = await slow;
    expect(first.status).toBe(201);
    expect(await countCharges(db, `amount = $1 AND operation_key IN (SELECT 'pagos-' || operation_id FROM pagos WHERE numero_orden = $2)`, [body.monto, body.numeroOrden])).toBe(1);
  });

  it('a stored answer is replayed after the service restarts', async () => {
    const first = await startVictim({});
    const key = randomUUID();
    const body = nuevoPago();
    const original = await postPago(first.baseUrl, { client: ALICE, key, body });
    expect(original.status).toBe(201);
    expect(await first.stop('SIGTERM')).toBe(0);
    const restarted = await startVictim({});
    const replay = await postPago(restarted.baseUrl, { client: ALICE, key, body });
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(original.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });
});

// True once no call the operation of key $1 made at the processor is still under way there.
const PROCESSOR_CALLS_ANSWERED = `
  SELECT 1 FROM idempotency_keys k
   WHERE k.key = $1
     AND NOT EXISTS (SELECT 1 FROM procesador_local.idempotency_keys p WHERE p.key LIKE 'pagos-' || k.operation_id || '-%' AND p.status = 'in_flight')`;

async function waitUntil(db: pg.Client, sql: string, params: unknown[]): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if ((await db.query(sql, params)).rowCount) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`never true: ${sql}`);
}
