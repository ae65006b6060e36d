import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Request } from 'express';
import { LoggerModule, type Params } from 'nestjs-pino';
import { authenticatedClientIdOf } from '../auth/authenticated-client.js';
import type { AppConfig } from '../config/app-config.js';
import type { LogFormat } from '../config/env.schema.js';
import { idempotencyOutcomeOf } from '../idempotency/idempotency.events.js';
import { requestIdOf } from './request-id.js';

// Probes and scrapes every few seconds would drown the request log.
const QUIET_PATHS = ['/health/live', '/health/ready', '/metrics'];

/**
 * JSON logs through pino (nestjs-pino): Nest's own logger is replaced, and every request gets one
 * line with its id, client, idempotency outcome, status and duration. Request and response headers
 * and bodies are never logged: they carry bearer tokens and card tokens.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>): Params => {
        const { level, format } = config.get('log', { infer: true });
        return {
          pinoHttp: {
            level,
            ...(isPretty(format) && { transport: { target: 'pino-pretty', options: { singleLine: true } } }),
            genReqId: requestIdOf,
            customAttributeKeys: { responseTime: 'durationMs' },
            serializers: {
              req: (request: IncomingMessage) => ({ method: request.method, url: request.url }),
              res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
            },
            customProps: (request) => ({
              requestId: request.id,
              clientId: authenticatedClientIdOf(request as Request),
              idempotency: idempotencyOutcomeOf(request as Request),
            }),
            customLogLevel: (_request, response, error) => (error || response.statusCode >= 500 ? 'error' : 'info'),
            autoLogging: { ignore: (request) => QUIET_PATHS.includes(request.url ?? '') },
          },
        };
      },
    }),
  ],
})
export class LoggingModule {}

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
