import type { FastifyInstance, FastifyReply } from 'fastify';
import type pg from 'pg';
import { listDeliveries } from './event-deliveries.js';
import type { WebhookDelivery } from './webhook-delivery.js';
import { WEBHOOK_FAULT_KINDS, type WebhookFaultInjector, type WebhookFaultKind } from './webhook-faults.js';
import { endpointProblem } from './webhook-endpoint.js';

// As the API's faults: more than any test needs, and a typo like 1e9 must not fill the memory.
const MAX_TIMES = 1_000;
// A delayed event keeps its lease meanwhile (event-deliveries.ts LEASE_SECONDS allows for this).
const MAX_DELAY_MS = 60_000;

export interface WebhookFaultTargets {
  readonly pool: pg.Pool;
  readonly faults: WebhookFaultInjector;
  readonly delivery: WebhookDelivery;
}

/**
 * The webhook part of the fault API (JSON, unauthenticated, only with fault injection on):
 * `POST /_faults/webhooks` adds a fault, `GET /_faults/webhooks` lists them,
 * `GET /_faults/webhook-deliveries` shows what was sent, and `POST /_faults/webhook-endpoint
 * {"url", "secret"}` points delivery somewhere at run time.
 */
export async function registerWebhookFaultRoutes(app: FastifyInstance, { pool, faults, delivery }: WebhookFaultTargets): Promise<void> {
  app.post('/_faults/webhooks', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const problem = problemWith(body);
    if (problem) return refuse(reply, problem);
    const fault = { fault: body.fault as WebhookFaultKind, type: (body.type as string | undefined) ?? null, delayMs: (body.delayMs as number | undefined) ?? 0 };
    faults.add(fault, (body.times as number | undefined) ?? 1);
    return reply.code(201).send({ pending: faults.list() });
  });

  app.get('/_faults/webhooks', async () => ({ pending: faults.list() }));

  app.get('/_faults/webhook-deliveries', async () => listDeliveries(pool));

  app.post('/_faults/webhook-endpoint', async (request, reply) => {
    const { url, secret } = (request.body ?? {}) as Record<string, unknown>;
    const problem = endpointProblem(url, secret);
    if (problem) return refuse(reply, problem);
    delivery.setEndpoint({ url: url as string, secret: secret as string });
    return reply.code(200).send({ url });
  });
}

function problemWith(body: Record<string, unknown>): string | undefined {
  if (!WEBHOOK_FAULT_KINDS.includes(body.fault as WebhookFaultKind)) return `fault must be one of ${WEBHOOK_FAULT_KINDS.join(', ')}`;
  if (body.times !== undefined && !(isCount(body.times, 1) && (body.times as number) <= MAX_TIMES)) return `times must be an integer from 1 to ${MAX_TIMES}`;
  if (body.delayMs !== undefined && !(isCount(body.delayMs, 0) && (body.delayMs as number) <= MAX_DELAY_MS)) return `delayMs must be an integer from 0 to ${MAX_DELAY_MS}`;
  if (body.type !== undefined && (typeof body.type !== 'string' || body.type === '')) return 'type must be an event type such as payment_intent.succeeded';
  return undefined;
}

function isCount(value: unknown, minimum: number): boolean {
  return Number.isInteger(value) && (value as number) >= minimum;
}

function refuse(reply: FastifyReply, message: string): FastifyReply {
  return reply.code(400).send({ error: { type: 'invalid_request_error', message } });
}
