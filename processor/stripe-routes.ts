import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Answer } from './answers.js';
import type { EventOrigin } from './events.js';
import { listEvents, retrieveEvent } from './events-api.js';
import type { Operation } from './faults.js';
import { type FormObject, parseForm } from './form-body.js';
import { type Delivery, execute, type ExecutionContext } from './idempotent-execution.js';
import { cancelIntent, confirmIntent, createIntent, listIntents, retrieveIntent } from './payment-intents.js';
import { createRefund, listRefunds, retrieveRefund } from './refunds.js';
import { authenticateIntent, settleIntent } from './test-helper-intents.js';
import { settleRefund } from './test-helper-refunds.js';
import type { Queryable } from './transaction.js';

type Endpoint = (db: Queryable, params: FormObject, id: string, origin: EventOrigin) => Promise<Answer>;
type Request = FastifyRequest<{ Params: { id?: string } }>;

/** The subset of Stripe's v1 API the local processor speaks, form-encoded as the SDK sends it. */
export async function registerStripeRoutes(app: FastifyInstance, context: ExecutionContext): Promise<void> {
  // Only Stripe's own encoding: a JSON body is refused (415) instead of being read differently.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseForm(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  const route = (method: 'GET' | 'POST', url: string, operation: Operation, endpoint: Endpoint, movesMoney: (params: FormObject) => boolean = () => false) =>
    app.route({
      method,
      url,
      handler: async (request: Request, reply: FastifyReply) => {
        const params = method === 'POST' ? ((request.body as FormObject | undefined) ?? {}) : queryOf(request.url);
        const idempotencyKey = method === 'POST' ? headerValue(request.headers['idempotency-key']) : undefined;
        const delivery = await execute(
          context,
          { operation, method, path: pathOf(request.url), params, idempotencyKey, movesMoney: movesMoney(params) },
          (db) => endpoint(db, params, request.params.id ?? '', { idempotencyKey: idempotencyKey ?? null }),
        );
        return deliver(request, reply, delivery, idempotencyKey);
      },
    });

  route('POST', '/v1/payment_intents', 'create_intent', (db, params, _id, origin) => createIntent(db, params, origin), (params) => params.confirm === 'true');
  route('GET', '/v1/payment_intents', 'list_intents', (db, params) => listIntents(db, params));
  route('GET', '/v1/payment_intents/:id', 'retrieve_intent', (db, params, id) => retrieveIntent(db, id, params));
  route('POST', '/v1/payment_intents/:id/confirm', 'confirm_intent', (db, params, id, origin) => confirmIntent(db, id, params, origin), () => true);
  route('POST', '/v1/payment_intents/:id/cancel', 'cancel_intent', (db, params, id, origin) => cancelIntent(db, id, params, origin));
  route('POST', '/v1/refunds', 'create_refund', (db, params, _id, origin) => createRefund(db, params, origin), () => true);
  route('GET', '/v1/refunds', 'list_refunds', (db, params) => listRefunds(db, params));
  route('GET', '/v1/refunds/:id', 'retrieve_refund', (db, params, id) => retrieveRefund(db, id, params));
  route('GET', '/v1/events', 'list_events', (db, params) => listEvents(db, params));
  route('GET', '/v1/events/:id', 'retrieve_event', (db, params, id) => retrieveEvent(db, id, params));
  // Local-only: what the customer's bank does away from the API (see test-helper-*.ts).
  route('POST', '/v1/test_helpers/payment_intents/:id/authenticate', 'authenticate_intent', (db, params, id, origin) => authenticateIntent(db, id, params, origin));
  route('POST', '/v1/test_helpers/payment_intents/:id/settle', 'settle_intent', (db, params, id, origin) => settleIntent(db, id, params, origin));
  route('POST', '/v1/test_helpers/refunds/:id/settle', 'settle_refund', (db, params, id, origin) => settleRefund(db, id, params, origin));
}

function deliver(request: Request, reply: FastifyReply, delivery: Delivery, idempotencyKey: string | undefined): FastifyReply {
  if (delivery.dropConnection) {
    // The work is committed; the client sees a reset instead of its answer.
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  reply.code(delivery.answer.status).header('content-type', 'application/json');
  if (idempotencyKey !== undefined) reply.header('idempotency-key', idempotencyKey);
  if (delivery.replayed) {
    reply.header('idempotent-replayed', 'true');
    // A stored 500 replays forever: retrying it would only replay it again.
    if (delivery.answer.status >= 500) reply.header('stripe-should-retry', 'false');
  }
  return reply.send(delivery.answer.body);
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

function queryOf(url: string): FormObject {
  const query = url.indexOf('?');
  return query < 0 ? {} : parseForm(url.slice(query + 1));
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
