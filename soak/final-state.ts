import pg from 'pg';
import Stripe from 'stripe';
import type { WebhookConsumer } from '../test/support/webhook-consumer.js';
import type { Recorder } from './recorder.js';
import { send } from './recorder.js';

/** An API client of the service: its name (also its webhook endpoint's last path segment) and token. */
export interface Merchant {
  readonly name: string;
  readonly token: string;
}

export interface ProcessorAccess {
  readonly url: string;
  readonly key: string;
}

/**
 * What the run left, appended to the history: the processor's intents and refunds (its API) and the
 * service's payments and refunds (its database), the client's event feed, and every
 * request the webhook consumer received.
 */
export async function recordFinalState(recorder: Recorder, processor: ProcessorAccess, serviceDatabaseUrl: string, serviceUrl: string, merchants: readonly Merchant[], consumer: WebhookConsumer): Promise<void> {
  await recordProcessorState(recorder, processor);
  await recordServiceState(recorder, serviceDatabaseUrl);
  for (const merchant of merchants) await recordFeed(recorder, serviceUrl, merchant);
  for (const received of consumer.received) {
    recorder.add({
      t: 'delivery',
      merchant: received.path.split('/').pop() ?? '',
      webhookId: received.id,
      timestamp: String(received.headers['webhook-timestamp']),
      signature: String(received.headers['webhook-signature']),
      body: received.body,
      status: received.status ?? 0,
    });
  }
}

/**
 * The processor's state as its API shows it (`/v1/payment_intents`, `/v1/refunds`, every page): an
 * intent is charged when it has a charge; what its charge has refunded is what its refunds hold.
 */
async function recordProcessorState(recorder: Recorder, processor: ProcessorAccess): Promise<void> {
  const { hostname, port } = new URL(processor.url);
  const stripe = new Stripe(processor.key, { host: hostname, port: Number(port), protocol: 'http', timeout: 30_000, maxNetworkRetries: 2 });
  const refunds: Stripe.Refund[] = [];
  await stripe.refunds.list({ limit: 100 }).autoPagingEach((refund) => void refunds.push(refund));
  const refundedOf = new Map<string, number>();
  for (const refund of refunds) {
    const intent = String(refund.payment_intent);
    recorder.add({ t: 'processor-refund', id: refund.id, paymentIntent: intent, reembolsoId: refund.metadata?.reembolso_id ?? null, amount: refund.amount, status: String(refund.status) });
    if (refund.status === 'succeeded' || refund.status === 'pending') refundedOf.set(intent, (refundedOf.get(intent) ?? 0) + refund.amount);
  }
  await stripe.paymentIntents.list({ limit: 100 }).autoPagingEach((intent) => {
    recorder.add({
      t: 'intent', id: intent.id, pagoId: intent.metadata.pago_id ?? null, amount: intent.amount, status: intent.status,
      charged: intent.latest_charge !== null, amountRefunded: refundedOf.get(intent.id) ?? 0,
    });
  });
}

async function recordServiceState(recorder: Recorder, databaseUrl: string): Promise<void> {
  await withClient(databaseUrl, async (db) => {
    const pagos = await db.query(`SELECT id, numero_orden, monto::int AS monto, estado, monto_reembolsado::int AS monto_reembolsado FROM pagos ORDER BY creado_en, id`);
    for (const row of pagos.rows) recorder.add({ t: 'pago', id: row.id, numeroOrden: row.numero_orden, monto: row.monto, estado: row.estado, montoReembolsado: row.monto_reembolsado });
    const reembolsos = await db.query(`SELECT id, pago_id, monto::int AS monto, estado FROM reembolsos ORDER BY creado_en, id`);
    for (const row of reembolsos.rows) recorder.add({ t: 'reembolso', id: row.id, pagoId: row.pago_id, monto: row.monto, estado: row.estado });
  });
}

/**
 * Waits, up to `capMs`, until every event has been delivered to the consumer: delivery is
 * eventual, not bounded by the quiet period, and a backlog of one client's webhooks can outlast it.
 * Resolves how many were still undelivered (the checker then reports each).
 */
export async function waitForDeliveries(databaseUrl: string, capMs: number): Promise<number> {
  const deadline = Date.now() + capMs;
  for (;;) {
    let undelivered = 0;
    await withClient(databaseUrl, async (db) => {
      const { rows } = await db.query<{ n: number }>(`
        SELECT count(*)::int AS n FROM eventos e
        WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.delivered_at IS NOT NULL)`);
      undelivered = rows[0]!.n;
    });
    if (undelivered === 0 || Date.now() > deadline) return undelivered;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

async function withClient(databaseUrl: string, use: (db: pg.Client) => Promise<void>): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await use(db);
  } finally {
    await db.end();
  }
}

async function recordFeed(recorder: Recorder, serviceUrl: string, { name, token }: Merchant): Promise<void> {
  let desde: string | undefined;
  for (;;) {
    const query = `limit=100${desde === undefined ? '' : `&desde=${encodeURIComponent(desde)}`}`;
    const answer = await send(`${serviceUrl}/eventos?${query}`, 'GET', { authorization: `Bearer ${token}` }, undefined, 30_000);
    if (answer?.status !== 200) throw new Error(`GET /eventos answered ${answer ? `${answer.status} ${answer.body}` : 'nothing'}`);
    const page = answer.json as Array<{ id: string; type: string; data: { id: string } }>;
    for (const event of page) recorder.add({ t: 'evento', merchant: name, id: event.id, type: event.type, dataId: event.data.id });
    if (page.length < 100) return;
    desde = page[page.length - 1]!.id;
  }
}
