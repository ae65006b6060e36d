import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { registerFaultRoutes } from './fault-routes.js';
import { FormSyntaxError } from './form-body.js';
import { newId } from './ids.js';
import type { ExecutionContext } from './idempotent-execution.js';
import { releaseHeldEvents } from './event-deliveries.js';
import { registerStripeRoutes } from './stripe-routes.js';
import { registerWebhookFaultRoutes, type WebhookFaultTargets } from './webhook-fault-routes.js';

export interface ServerOptions {
  readonly context: ExecutionContext;
  readonly faultInjection: boolean;
  /** Called by `POST /_faults/refuse`. */
  readonly refuseConnections: (ms: number) => void;
  /** What the webhook fault routes act on. */
  readonly webhooks: Omit<WebhookFaultTargets, 'pool'>;
}

const FAULT_ROUTES_PREFIX = '/_faults';
const TEST_SECRET_KEY = /^Bearer (sk_test_\S*)$/;

/** Fastify with Stripe's conventions: bearer secret keys, a `Request-Id` on every answer, Stripe-shaped errors. */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const { context } = options;
  // Close cuts idle keep-alive connections too, instead of waiting for clients to hang up.
  const app = Fastify({ logger: false, forceCloseConnections: true });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('request-id', newId('req'));
    if (request.url.startsWith(FAULT_ROUTES_PREFIX)) return;
    const authorization = request.headers.authorization ?? '';
    if (!TEST_SECRET_KEY.test(authorization)) {
      const given = authorization.replace(/^Bearer /, '');
      return reply.code(401).send({ error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${redact(given)}` } });
    }
  });

  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({ error: { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${request.url.split('?')[0]}).` } }),
  );

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const status = error instanceof FormSyntaxError ? 400 : (error.statusCode ?? 500);
    if (status < 500) return reply.code(status).send({ error: { type: 'invalid_request_error', message: error.message } });
    context.log(`${request.method} ${request.url} failed: ${error.message}`);
    return reply.code(500).send({ error: { type: 'api_error', message: 'An unexpected error occurred in the local processor.' } });
  });

  await app.register(async (scope) => registerStripeRoutes(scope, context));
  if (options.faultInjection) {
    const webhooks = { ...options.webhooks, pool: context.pool };
    const clearWebhookFaults = async () => {
      webhooks.faults.clear();
      await releaseHeldEvents(context.pool);
    };
    await app.register(async (scope) => registerFaultRoutes(scope, context.faults, options.refuseConnections, clearWebhookFaults));
    await app.register(async (scope) => registerWebhookFaultRoutes(scope, webhooks));
  }
  return app;
}

/** Stripe shows only the start and end of a rejected key. */
function redact(key: string): string {
  if (key === '') return '(none)';
  return key.length <= 12 ? `${key.slice(0, 3)}***` : `${key.slice(0, 8)}***${key.slice(-4)}`;
}
