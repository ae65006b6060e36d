import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startAppProcess } from '../support/app-process.js';
import { ALICE, BOB, type TestClient } from '../support/clients.js';
import { get, nuevoPago, postPago, postReembolso } from '../support/http.js';
import { chargesOfPagoSql } from '../support/ledger.js';
import { backdateAbandoned, settledEstado } from '../support/stale-payments.js';
import { survivorAndVictims } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

type Evento = { id: string; type: string; timestamp: string; data: Record<string, unknown> };

/**
 * The outbox and its feed. Real: service processes (one reconciles every second), their local
 * processor over HTTP, PostgreSQL; a victim process is killed or fenced out mid-request.
 */
describe('events: written with the state they announce, listed by GET /eventos', () => {
  const setup = survivorAndVictims('eventos');
  const base = () => setup.survivor.baseUrl;

  const eventsOf = async (resourceId: string): Promise<Evento[]> =>
    (await setup.db.query(`SELECT payload::text FROM eventos WHERE payload->'data'->>'id' = $1 ORDER BY seq`, [resourceId])).rows.map((row) => JSON.parse(row.payload));
  const eventsOfOrder = async (numeroOrden: string): Promise<Evento[]> =>
    (await setup.db.query(`SELECT payload::text FROM eventos WHERE payload->'data'->>'numeroOrden' = $1 ORDER BY seq`, [numeroOrden])).rows.map((row) => JSON.parse(row.payload));
  const feed = async (query: string, client: TestClient = ALICE): Promise<Evento[]> => {
    const page = await get(base(), `/eventos${query}`, client);
    expect(page.status).toBe(200);
    return page.json as Evento[];
  };

  it('an approved payment commits one pago.aprobado whose data is the API answer, served by GET /eventos/{id} to its client only', async () => {
    const key = randomUUID();
    const body = nuevoPago();
    const created = await postPago(base(), { client: ALICE, key, body });
    expect(created.status).toBe(201);
    const [evento, ...others] = await eventsOf(created.json.id);
    expect(others).toEqual([]);
    expect(evento).toEqual({ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), type: 'pago.aprobado', timestamp: expect.stringMatching(/Z$/), data: created.json });
    expect((await get(base(), `/pagos/${created.json.id}`, ALICE)).json).toEqual(evento!.data);

    const one = await get(base(), `/eventos/${evento!.id}`, ALICE);
    expect(one.status).toBe(200);
    expect(one.headers.get('content-type')).toMatch(/^application\/json/);
    expect(one.json).toEqual(evento);
    expect((await get(base(), `/eventos/${evento!.id}`, BOB)).status).toBe(404);
    expect((await get(base(), `/eventos/nope`, ALICE)).status).toBe(404);
    // A replay of the key writes nothing new.
    expect((await postPago(base(), { client: ALICE, key, body })).headers.get('idempotent-replayed')).toBe('true');
    expect(await eventsOf(created.json.id)).toHaveLength(1);
  });

  it('a declined payment commits pago.rechazado carrying the payment of the 402; a refund commits reembolso.aprobado', async () => {
    const declined = await postPago(base(), { client: ALICE, key: randomUUID(), body: nuevoPago({ token: 'tok_decline' }) });
    expect(declined.status).toBe(402);
    expect(await eventsOf(declined.json.pago.id)).toEqual([expect.objectContaining({ type: 'pago.rechazado', data: declined.json.pago })]);

    const pago = await postPago(base(), { client: ALICE, key: randomUUID(), body: nuevoPago() });
    const refund = await postReembolso(base(), pago.json.id, { client: ALICE, key: randomUUID(), body: { monto: 100 } });
    expect(refund.status).toBe(201);
    expect(await eventsOf(refund.json.id)).toEqual([expect.objectContaining({ type: 'reembolso.aprobado', data: refund.json })]);
  });

  it('a processor failure commits pago.fallido (and the payment approved on a later retry, pago.aprobado); a failed refund reembolso.fallido', async () => {
    const body = nuevoPago({ token: 'tok_error' });
    expect((await postPago(base(), { client: ALICE, key: randomUUID(), body })).status).toBe(502);
    const paid = await postPago(base(), { client: ALICE, key: randomUUID(), body: { ...body, token: 'tok_visa' } });
    expect(paid.status).toBe(201);
    const [fallido] = (await get(base(), `/pagos?numeroOrden=${body.numeroOrden}`, ALICE)).json;
    expect(await eventsOfOrder(body.numeroOrden)).toEqual([
      expect.objectContaining({ type: 'pago.fallido', data: fallido }),
      expect.objectContaining({ type: 'pago.aprobado', data: paid.json }),
    ]);

    // The local processor fails refunds of exactly 13 with a 500: indeterminate, so PENDIENTE (503) until the
    // reconciler, past the lock timeout, finds no refund made: FALLIDO then, and its event.
    const failed = await postReembolso(base(), paid.json.id, { client: ALICE, key: randomUUID(), body: { monto: 13 } });
    expect(failed.status).toBe(503);
    await setup.db.query(`UPDATE reembolsos SET actualizado_en = now() - interval '1 hour' WHERE pago_id = $1`, [paid.json.id]);
    await waitUntil(async () => (await setup.db.query(`SELECT 1 FROM reembolsos WHERE pago_id = $1 AND estado = 'FALLIDO'`, [paid.json.id])).rowCount === 1);
    const [reembolso] = (await get(base(), `/pagos/${paid.json.id}/reembolsos`, ALICE)).json;
    expect(await eventsOf(reembolso.id)).toEqual([expect.objectContaining({ type: 'reembolso.fallido', data: reembolso })]);
  });

  it('a payment settled by the reconciler (its process killed after the charge) commits pago.aprobado', async () => {
    const victim = await setup.startVictim({ GATEWAY_LATENCY_MS: '3000' });
    const body = nuevoPago();
    const lost = postPago(victim.baseUrl, { client: ALICE, key: randomUUID(), body });
    await waitUntil(async () => (await setup.db.query(`SELECT 1 FROM pagos p WHERE numero_orden = $1 AND ${chargesOfPagoSql('p')} > 0`, [body.numeroOrden])).rowCount === 1);
    await victim.stop('SIGKILL');
    await expect(lost).rejects.toThrow();
    await backdateAbandoned(setup.db, body.numeroOrden);
    expect(await settledEstado(setup.db, body.numeroOrden)).toBe('APROBADO');
    const [pago] = (await get(base(), `/pagos?numeroOrden=${body.numeroOrden}`, ALICE)).json;
    expect(await eventsOfOrder(body.numeroOrden)).toEqual([expect.objectContaining({ type: 'pago.aprobado', data: pago })]);
  });

  it('a completion that loses its claim (a stalled owner fenced out) rolls back the payment and its event: only the processor\'s webhook then decides it, once', async () => {
    const victim = await setup.startVictim({ GATEWAY_LATENCY_MS: '1000' });
    const key = randomUUID();
    const body = nuevoPago();
    const attempt = postPago(victim.baseUrl, { client: ALICE, key, body });
    await waitUntil(async () => (await setup.db.query(`SELECT 1 FROM idempotency_keys WHERE key = $1`, [key])).rowCount === 1);
    await setup.db.query(`UPDATE idempotency_keys SET lock_token = $2 WHERE key = $1`, [key, randomUUID()]);
    expect((await attempt).status).toBe(409);
    // The charge happened, so the processor's webhook decides the payment; the route's close and its event were rolled back.
    expect(await settledEstado(setup.db, body.numeroOrden)).toBe('APROBADO');
    expect(await eventsOfOrder(body.numeroOrden)).toEqual([expect.objectContaining({ type: 'pago.aprobado' })]);
    const { rows } = await setup.db.query(
      `SELECT EXISTS (SELECT 1 FROM eventos_procesador ep WHERE ep.xmin::text = (e.txid::text::bigint & 4294967295)::text) AS by_webhook
         FROM eventos e WHERE e.payload->'data'->>'numeroOrden' = $1`,
      [body.numeroOrden],
    );
    expect(rows).toEqual([{ by_webhook: true }]);
  });

  it('GET /eventos pages oldest first with desde, without gaps or repeats while payments are being made', async () => {
    const writing = Promise.all(Array.from({ length: 30 }, () => postPago(base(), { client: ALICE, key: randomUUID(), body: nuevoPago() })));
    const seen: string[] = [];
    let all: string[] | undefined;
    void writing.then(async () => {
      all = (await setup.db.query(`SELECT id FROM eventos WHERE client_id = 'alice' ORDER BY txid, seq`)).rows.map((row) => row.id);
    });
    const deadline = Date.now() + 30_000;
    // Until every event written is listed (a page may come back empty while a transaction runs).
    while ((all === undefined || seen.length < all.length) && Date.now() < deadline) {
      const last = seen.at(-1);
      seen.push(...(await feed(`?limit=7${last ? `&desde=${last}` : ''}`)).map((evento) => evento.id));
    }
    await writing;
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(all);
  });

  // What an approved payment looks like in the API (the feed checks nothing of it; the contract does).
  const PAGO_EN_EVENTO = {
    id: '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11', numeroOrden: 'ORD-LATE', monto: 1999, moneda: 'EUR', montoReembolsado: 0, estado: 'APROBADO', creadoEn: '2026-12-02T18:21:37.435Z',
  };

  it('an event committed late by an older transaction is listed after the cursor, never skipped behind it', async () => {
    const older = new pg.Client({ connectionString: setup.url });
    const younger = new pg.Client({ connectionString: setup.url });
    await Promise.all([older.connect(), younger.connect()]);
    try {
      const before = (await feed('?limit=100', BOB)).map((evento) => evento.id);
      const insert = (db: pg.Client, id: string) =>
        db.query(
          `INSERT INTO eventos (id, client_id, type, payload)
           VALUES ($1, 'bob', 'pago.aprobado', json_build_object('id', $1::text, 'type', 'pago.aprobado', 'timestamp', now(), 'data', $2::json))`,
          [id, JSON.stringify(PAGO_EN_EVENTO)],
        );
      const [a, b] = [eventId(), eventId()];
      await older.query('BEGIN');
      await insert(older, a);
      await insert(younger, b);
      // b committed, a still running: b is held back, since a could still commit before it in the feed's order.
      const cursor = before.at(-1);
      const whileRunning = (await feed(`?limit=100${cursor ? `&desde=${cursor}` : ''}`, BOB)).map((evento) => evento.id);
      expect(whileRunning).toEqual([]);
      await older.query('COMMIT');
      // Listed once every older transaction of the cluster has ended (normally at once).
      let after: string[] = [];
      await waitUntil(async () => (after = (await feed(`?limit=100${cursor ? `&desde=${cursor}` : ''}`, BOB)).map((evento) => evento.id)).length >= 2);
      expect(after).toEqual([a, b]);
    } finally {
      await Promise.all([older.end(), younger.end()]);
    }
  });

  it('desde naming no event of the client is a 404 problem, never an empty page; limit is bounded', async () => {
    const unknown = await get(base(), `/eventos?desde=evt_${'0'.repeat(32)}`, ALICE);
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toBe('https://pagos.dev/problems/cursor-de-eventos-desconocido');
    expect((await get(base(), '/eventos?limit=0', ALICE)).status).toBe(400);
    expect((await get(base(), '/eventos?limit=101', ALICE)).status).toBe(400);
    expect((await get(base(), '/eventos')).status).toBe(401);
  });
});

function eventId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`;
}

describe('events past EVENTS_TTL_DAYS', () => {
  it('go with their day: the scheduled purge drops the partition of a day past the TTL; younger ones stay', async () => {
    const url = await createTestDatabase('eventos-purge');
    const app = await startAppProcess(url, { IDEMPOTENCY_PURGE_CRON: '* * * * * *', EVENTS_TTL_DAYS: '30' });
    const db = await connect(url);
    try {
      const [old, young] = [await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() }), await postPago(app.baseUrl, { client: ALICE, key: randomUUID(), body: nuevoPago() })];
      // Backdated into the partition of its day 31 days ago, made here (the service makes days ahead only) in
      // the same transaction: the purge, running every second, sees the day only once it holds the event.
      await db.query('BEGIN');
      await db.query(`SELECT create_daily_partitions('eventos', now() - interval '31 days', now() - interval '31 days')`);
      await db.query(`UPDATE eventos SET created_at = now() - interval '31 days' WHERE payload->'data'->>'id' = $1`, [old.json.id]);
      await db.query('COMMIT');
      // The drop is a DETACH ... CONCURRENTLY, then a DROP: the event leaves eventos at the first step, the
      // partition the catalog at the last. Waiting for the last is waiting for both.
      await waitUntil(async () => (await db.query(`SELECT 1 FROM daily_partitions('eventos') WHERE upper_bound <= now() - interval '30 days'`)).rowCount === 0);
      expect((await db.query(`SELECT 1 FROM eventos WHERE payload->'data'->>'id' = $1`, [old.json.id])).rowCount).toBe(0);
      expect((await db.query(`SELECT 1 FROM eventos WHERE payload->'data'->>'id' = $1`, [young.json.id])).rowCount).toBe(1);
    } finally {
      await db.end();
      await app.stop();
    }
  });
});
