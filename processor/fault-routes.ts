import type { FastifyInstance } from 'fastify';
import { FAULT_KINDS, type FaultInjector, type FaultKind, type Operation, OPERATIONS } from './faults.js';

// More than any test needs; a typo like 1e9 must not fill the memory.
const MAX_TIMES = 1_000;

/**
 * The fault API, JSON and unauthenticated, registered only when fault injection is on:
 * `POST /_faults` adds, `GET /_faults` lists, `DELETE /_faults` clears (the webhook faults too, see
 * `clearOthers`), and `POST /_faults/refuse {"ms": 3000}` stops accepting connections for a while.
 */
export async function registerFaultRoutes(
  app: FastifyInstance,
  faults: FaultInjector,
  refuseConnections: (ms: number) => void,
  clearOthers: () => Promise<void>,
): Promise<void> {
  app.post('/_faults', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const problem = problemWith(body);
    if (problem) return reply.code(400).send({ error: { type: 'invalid_request_error', message: problem } });
    faults.add({ operation: body.operation as Operation, fault: body.fault as FaultKind, latencyMs: (body.latencyMs as number | undefined) ?? 0 }, (body.times as number | undefined) ?? 1);
    return reply.code(201).send({ pending: faults.list() });
  });

  app.get('/_faults', async () => ({ pending: faults.list() }));

  app.delete('/_faults', async () => {
    faults.clear();
    await clearOthers();
    return { pending: [] };
  });

  app.post('/_faults/refuse', async (request, reply) => {
    const ms = ((request.body ?? {}) as Record<string, unknown>).ms;
    if (!isCount(ms, 1)) return reply.code(400).send({ error: { type: 'invalid_request_error', message: 'ms must be a positive integer' } });
    // Answer first; only then stop listening and cut every open connection, this one included.
    reply.raw.once('finish', () => setImmediate(() => refuseConnections(ms as number)));
    return reply.code(202).send({ refusing_ms: ms });
  });
}

function problemWith(body: Record<string, unknown>): string | undefined {
  if (!OPERATIONS.includes(body.operation as Operation)) return `operation must be one of ${OPERATIONS.join(', ')}`;
  if (!FAULT_KINDS.includes(body.fault as FaultKind)) return `fault must be one of ${FAULT_KINDS.join(', ')}`;
  if (body.times !== undefined && !(isCount(body.times, 1) && (body.times as number) <= MAX_TIMES)) return `times must be an integer from 1 to ${MAX_TIMES}`;
  if (body.latencyMs !== undefined && !isCount(body.latencyMs, 0)) return 'latencyMs must be a non-negative integer';
  return undefined;
}

function isCount(value: unknown, minimum: number): boolean {
  return Number.isInteger(value) && (value as number) >= minimum;
}
