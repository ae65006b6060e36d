import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Logger, pino } from 'pino';
import { authenticatedClientIdOf } from '../auth/authenticated-client.js';
import type { AppConfig } from '../config/app-config.js';
import type { LogFormat } from '../config/env.schema.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

export const REQUEST_LOGGER = Symbol('REQUEST_LOGGER');

// Probes and scrapes every few seconds would drown the request log.
const QUIET_PATHS = new Set(['/health/live', '/health/ready', '/metrics']);

const REQUEST_ID = Symbol('logging:requestId');
const LINE_FIELDS = Symbol('logging:lineFields');

interface IdentifiedRequest extends FastifyRequest {
  [REQUEST_ID]?: string;
  [LINE_FIELDS]?: Record<string, string>;
}

/** The id the request log gives this request (see {@link requestIdOf}); undefined before its hook ran. */
export function loggedRequestIdOf(request: FastifyRequest): string | undefined {
  return (request as IdentifiedRequest)[REQUEST_ID];
}

/**
 * Adds a field to this request's log line: how a higher layer describes the request (the
 * idempotency outcome, wired in app.ts from the mechanism's events) without the log importing it.
 *
 * @example
 *   addToRequestLine(request, 'idempotency', 'replayed') // the line gets "idempotency":"replayed"
 */
export function addToRequestLine(request: FastifyRequest, field: string, value: string): void {
  const identified = request as IdentifiedRequest;
  (identified[LINE_FIELDS] ??= {})[field] = value;
}

/**
 * The pino logger of the app, and a Fastify `onRequest` hook that writes one line per request with its id,
 * client, the fields layers above added (the idempotency outcome), status and duration. Request and response headers and bodies are
 * never logged: they carry bearer tokens and card tokens. Per request it costs an id, a listener and,
 * only when the line's level is enabled, the line: no child logger, no async context.
 */
export class RequestLogger {
  constructor(readonly logger: Logger) {}

  readonly onRequest = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const started = performance.now();
    const id = requestIdOf(request.headers[REQUEST_ID_HEADER.toLowerCase()]);
    (request as IdentifiedRequest)[REQUEST_ID] = id;
    reply.header(REQUEST_ID_HEADER, id);
    // The raw response's 'close' also comes when the client hangs up before the answer.
    if (!QUIET_PATHS.has(request.url)) reply.raw.once('close', () => this.write(request, reply, started));
    done();
  };

  private write(request: FastifyRequest, reply: FastifyReply, started: number): void {
    const statusCode = reply.raw.statusCode;
    const level = statusCode >= 500 ? 'error' : 'info';
    if (!this.logger.isLevelEnabled(level)) return;
    const line = {
      req: { id: loggedRequestIdOf(request), method: request.method, url: request.url },
      clientId: authenticatedClientIdOf(request),
      ...(request as IdentifiedRequest)[LINE_FIELDS],
      res: { statusCode },
      durationMs: Math.round(performance.now() - started),
    };
    this.logger[level](line, reply.raw.writableFinished ? 'request completed' : 'request aborted');
  }
}

export function createRequestLogger({ level, format }: AppConfig['log']): RequestLogger {
  return new RequestLogger(pino({ level, ...(isPretty(format) && { transport: { target: 'pino-pretty', options: { singleLine: true } } }) }));
}

/** Pretty output needs pino-pretty, a development dependency; production images log JSON. */
function isPretty(format: LogFormat): boolean {
  if (format === 'json') return false;
  if (format === 'auto' && !process.stdout.isTTY) return false;
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
