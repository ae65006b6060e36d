import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { get, type HttpResult, nuevoPago, postPago } from '../support/http.js';
import { countChargesOfOrder } from '../support/ledger.js';
import { authenticateAtProcessor, embeddedProcessorUrlOf, intentOf, intentStatusOf } from '../support/autenticacion.js';
import { backdateAuthentication, eventosDePago } from '../support/stale-payments.js';
import { RECONCILE_EVERY_SECOND } from '../support/survivor-and-victims.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/waiting.js';

/**
 * 3-D Secure as a mobile app meets it on `npm start`: the service with its embedded local processor,
 * which sends its signed webhooks back to the service, wired by the service itself. Real: the service
 * process, the processor in it over HTTP, PostgreSQL; the customer's challenge is the processor's
 * local-only test route.
 */
describe('a payment that needs the customer: 3-D Secure (real app, embedded local processor, real PostgreSQL)', () => {
  let app: AppProcess;
  let db: pg.Client;
  let processorUrl: string;

  beforeAll(async () => {
    const url = await createTestDatabase('autenticacion');
    app = await startAppProcess(url, { PAGOS_RECONCILE_CRON: RECONCILE_EVERY_SECOND });
    processorUrl = embeddedProcessorUrlOf(app);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  const pay = (key: string, body = nuevoPago({ token: 'pm_card_authenticationRequired' })): Promise<HttpResult> => postPago(app.baseUrl, { client: ALICE, key, body });
  const estadoOf = async (id: string): Promise<HttpResult> => get(app.baseUrl, `/pagos/${id}`, ALICE);
  const settled = async (id: string): Promise<HttpResult> => {
    await waitUntil(async () => (await estadoOf(id)).json.estado !== 'REQUIERE_AUTENTICACION', 4_000);
    return estadoOf(id);
  };

  it('answers 202 REQUIERE_AUTENTICACION with the client secret, stored: the retry replays it byte for byte, the order is held, nothing is charged', async () => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'pm_card_authenticationRequired' });
    const started = Date.now();
    const first = await pay(key, body);
    expect(first.status).toBe(202);
    expect(first.headers.get('location')).toBe(`/pagos/${first.json.id}`);
    expect(first.json).toEqual({
      id: expect.any(String), numeroOrden: body.numeroOrden, monto: 1999, moneda: 'EUR', montoReembolsado: 0, estado: 'REQUIERE_AUTENTICACION',
      autenticacion: { clientSecret: expect.stringMatching(/^pi_\w+_secret_\w+$/), expiraEn: expect.any(String) },
      creadoEn: expect.any(String),
    });
    const expiresIn = Date.parse(first.json.autenticacion.expiraEn) - started;
    expect(expiresIn).toBeGreaterThan(890_000);
    expect(expiresIn).toBeLessThan(910_000);

    const replay = await pay(key, body);
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);

    const other = await pay(randomUUID(), body);
    expect(other.status).toBe(409);
    expect(other.json.type).toMatch(/orden-con-pago-en-curso$/);

    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(0);
    const intent = await intentOf(db, first.json.id);
    expect(first.json.autenticacion.clientSecret.startsWith(`${intent}_secret_`)).toBe(true);
    expect(await intentStatusOf(db, intent)).toBe('requires_action');
    // Its event announces it without the secret: events go to every endpoint and the feed.
    const eventos = await eventosDePago(db, first.json.id);
    expect(eventos.map((evento) => evento.type)).toEqual(['pago.requiere_autenticacion']);
    expect(JSON.stringify(eventos)).not.toContain('secret');
  });

  it('the customer authenticates: the processor\'s webhook settles it APROBADO once, charged once, with one pago.aprobado', async () => {
    const key = randomUUID();
    const body = nuevoPago({ token: 'pm_card_authenticationRequired' });
    const accepted = await pay(key, body);
    await authenticateAtProcessor(processorUrl, await intentOf(db, accepted.json.id), 'success');
    const pago = await settled(accepted.json.id);
    expect(pago.json).toMatchObject({ estado: 'APROBADO' });
    expect(pago.json).not.toHaveProperty('autenticacion');
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(1);
    await waitUntil(async () => (await eventosDePago(db, accepted.json.id)).length === 2);
    expect((await eventosDePago(db, accepted.json.id)).map((evento) => evento.type)).toEqual(['pago.requiere_autenticacion', 'pago.aprobado']);
    // As Stripe replays a requires_action intent's creation: the key's answer is still the 202.
    const replay = await pay(key, body);
    expect(replay.status).toBe(202);
    expect(replay.text).toBe(accepted.text);
    // The client secret is forgotten once it settles.
    expect((await db.query('SELECT client_secret FROM pagos WHERE id = $1', [accepted.json.id])).rows[0].client_secret).toBeNull();
  });

  it('a failed authentication: RECHAZADO with motivo "autenticacion", nothing charged, and the order can be paid again', async () => {
    const body = nuevoPago({ token: 'pm_card_authenticationRequired' });
    const accepted = await pay(randomUUID(), body);
    await authenticateAtProcessor(processorUrl, await intentOf(db, accepted.json.id), 'failure');
    expect((await settled(accepted.json.id)).json).toMatchObject({ estado: 'RECHAZADO', motivo: 'autenticacion' });
    expect(await countChargesOfOrder(db, body.numeroOrden)).toBe(0);
    const again = await pay(randomUUID(), { ...body, token: 'pm_card_visa' });
    expect(again.status).toBe(201);
    expect(again.json.estado).toBe('APROBADO');
  });

  it('never authenticated: past its time the reconciler cancels the intent, RECHAZADO "autenticacion-abandonada", the order free', async () => {
    const body = nuevoPago({ token: 'pm_card_authenticationRequired' });
    const accepted = await pay(randomUUID(), body);
    const intent = await intentOf(db, accepted.json.id);
    await backdateAuthentication(db, accepted.json.id);
    expect((await settled(accepted.json.id)).json).toMatchObject({ estado: 'RECHAZADO', motivo: 'autenticacion-abandonada' });
    expect(await intentStatusOf(db, intent)).toBe('canceled');
    expect((await eventosDePago(db, accepted.json.id)).map((evento) => evento.type)).toEqual(['pago.requiere_autenticacion', 'pago.rechazado']);
    expect((await pay(randomUUID(), { ...body, token: 'pm_card_visa' })).status).toBe(201);
  });
});
