import { Module } from '@nestjs/common';
import { RequestLoggerModule } from './request-logger.module.js';

/**
 * JSON logs through pino: Nest's own logger is replaced (`PinoNestLogger`, set by app.ts) and every
 * request gets one line (`RequestLogger`, mounted by app.ts ahead of every other middleware, so that
 * requests refused before routing — malformed JSON, 415, draining — are logged too).
 */
@Module({
  imports: [RequestLoggerModule],
  exports: [RequestLoggerModule],
})
export class LoggingModule {}
