import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { nuevoPago, postPago } from '../support/http.js';
import { countChargesOfOrder, keyRow } from '../support/ledger.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

/**
 * Two keys for one order. A conflict with a payment still in progress is a passing state: answered,
 * not stored, so the same key runs again once the order is free. A conflict with a paid order is
 * final and stored. Real: the service process, its processor latency, PostgreSQL.
 */
describe('conflicts between two keys for one order', () => {
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('order_conflicts');
    app = await startAppProcess(url, { GATEWAY_LATENCY_MS: '1500' });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  /** The order's payment, once the first attempt has started it. */
  const pagoOf = async (orden: string): Promise<{ id: string }> => {
    await waitUntil(async () => (await db.query(`SELECT 1 FROM pagos WHERE numero_orden = $1`, [orden])).rowCount === 1);
    return (await db.query(`SELECT id FROM pagos WHERE numero_orden = $1`, [orden])).rows[0];
  };

  it('K2 during K1 gets 409 orden-con-pago-en-curso with Retry-After, not stored: after K1 is declined, K2 retried pays (201, not a replay)', async () => {
    const orden = nuevoPago().numeroOrden;
    const k1 = randomUUID();
    const k2 = randomUUID();
    const declined = postPago(app.baseUrl, { client: ALICE, key: k1, body: nuevoPago({ numeroOrden: orden, token: 'tok_decline' }) });
    const pagoK1 = await pagoOf(orden);

    const body = nuevoPago({ numeroOrden: orden });
    const conflict = await postPago(app.baseUrl, { client: ALICE, key: k2, body });
    expect(conflict.status).toBe(409);
    expect(conflict.headers.get('retry-after')).toBe('2');
    expect(conflict.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(conflict.json).toMatchObject({ type: expect.stringContaining('orden-con-pago-en-curso'), pagoExistenteId: pagoK1.id });
    // Claimed with the payment's start, the key rolled back with it: a transient conflict leaves no key behind.
    expect(await keyRow(db, ALICE.clientId, k2)).toBeUndefined();

    expect((await declined).status).toBe(402);
    const retried = await postPago(app.baseUrl, { client: ALICE, key: k2, body });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.json).toMatchObject({ numeroOrden: orden, estado: 'APROBADO' });
    expect(await countChargesOfOrder(db, orden)).toBe(1);

    const replay = await postPago(app.baseUrl, { client: ALICE, key: k2, body });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(retried.text);
  });

  it('a conflict with a paid order stays stored: K3 gets 409 orden-ya-pagada, and its retry replays it', async () => {
    const paid = nuevoPago();
    expect((await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: paid })).status).toBe(201);
    const k3 = randomUUID();
    const first = await postPago(app.baseUrl, { client: ALICE, key: k3, body: paid });
    expect(first.status).toBe(409);
    expect(first.headers.get('retry-after')).toBeNull();
    expect(first.json.type).toContain('orden-ya-pagada');
    const again = await postPago(app.baseUrl, { client: ALICE, key: k3, body: paid });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });
});
