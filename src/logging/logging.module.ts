import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { HttpLogger } from 'pino-http';
import { REQUEST_LOGGER } from './request-logger.js';
import { RequestLoggerModule } from './request-logger.module.js';

/**
 * JSON logs through pino: Nest's own logger is replaced (nestjs-pino) and every request gets one
 * line. The request middleware is mounted by app.ts ahead of every other middleware, so that requests
 * refused before routing (malformed JSON, 415, draining) are logged too; nestjs-pino reuses it
 * (`useExisting`) for logs written while a request runs, and its logger for everything else.
 */
@Module({
  imports: [
    RequestLoggerModule,
    LoggerModule.forRootAsync({
      imports: [RequestLoggerModule],
      inject: [REQUEST_LOGGER],
      useFactory: (requestLogger: HttpLogger) => ({ useExisting: true, pinoHttp: { logger: requestLogger.logger } }),
    }),
  ],
  exports: [RequestLoggerModule],
})
export class LoggingModule {}
