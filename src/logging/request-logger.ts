import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { pino } from 'pino';
import { type HttpLogger, pinoHttp } from 'pino-http';
import { authenticatedClientIdOf } from '../auth/authenticated-client.js';
import type { AppConfig } from '../config/app-config.js';
import type { LogFormat } from '../config/env.schema.js';
import { idempotencyOutcomeOf } from '../idempotency/idempotency.events.js';
import { requestIdOf } from './request-id.js';

export const REQUEST_LOGGER = Symbol('REQUEST_LOGGER');

// Probes and scrapes every few seconds would drown the request log.
const QUIET_PATHS = ['/health/live', '/health/ready', '/metrics'];

/**
 * The pino logger of the app, wrapped as Express middleware that writes one line per request with
 * its id, client, idempotency outcome, status and duration. Request and response headers and bodies
 * are never logged: they carry bearer tokens and card tokens.
 */
export function createRequestLogger({ level, format }: AppConfig['log']): HttpLogger {
  const logger = pino({ level, ...(isPretty(format) && { transport: { target: 'pino-pretty', options: { singleLine: true } } }) });
  return pinoHttp({
    logger,
    genReqId: requestIdOf,
    customAttributeKeys: { responseTime: 'durationMs' },
    serializers: {
      req: (request: IncomingMessage & { id?: unknown }) => ({ id: request.id, method: request.method, url: request.url }),
      res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
    },
    customProps: (request) => ({
      clientId: authenticatedClientIdOf(request as Request),
      idempotency: idempotencyOutcomeOf(request as Request),
    }),
    customLogLevel: (_request, response, error) => (error || response.statusCode >= 500 ? 'error' : 'info'),
    autoLogging: { ignore: (request) => QUIET_PATHS.includes(request.url ?? '') },
  });
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
