import type { DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import type { AppConfig } from './config/app-config.js';
import { answerClientErrorWithProblem } from './http/client-error.handler.js';
import { Draining } from './http/draining.js';
import { answerFrameworkErrorWithProblem } from './http/framework-error.handler.js';
import { acceptJsonBodiesOnly } from './http/json-body.parser.js';
import { serveOpenApiDocs } from './http/openapi-docs.js';
import { ProblemFilter } from './http/problem.filter.js';
import { VALIDATION_PIPE } from './http/validation.js';
import { IdempotencyEvents } from './idempotency/idempotency.events.js';
import { PinoNestLogger } from './logging/pino-nest-logger.js';
import { addToRequestLine, REQUEST_LOGGER, type RequestLogger } from './logging/request-logger.js';
import { HttpMetrics } from './metrics/http-metrics.js';

// Node's own defaults, which Fastify would otherwise change (72 s keep-alive, no request timeout).
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 300_000;

function createHttpAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    clientErrorHandler: answerClientErrorWithProblem,
    // The router's own refusals (a path that does not decode, an over-long parameter) in problem+json too.
    frameworkErrors: answerFrameworkErrorWithProblem,
    // Shutdown answers are the Draining hook's problem+json 503s, not Fastify's bare ones.
    return503OnClosing: false,
    // Paths match as they did on Express: `/pagos/` and `/Pagos` are `/pagos`.
    routerOptions: { ignoreTrailingSlash: true, caseSensitive: false },
  });
}

/** The configured application, not yet listening: shared by main.ts and the benchmark's server. */
export async function createApp(
  config: AppConfig & { databaseUrl: string },
  extraImports: Array<Type | DynamicModule> = [],
): Promise<NestFastifyApplication> {
  const root = AppModule.forRoot(config, extraImports);
  // Start-up lines wait for the JSON logger instead of going out in Nest's own format; when start-up
  // fails, they wait for the caller, which gets the error rather than an exit (and stops what it started).
  const app = await NestFactory.create<NestFastifyApplication>(root, createHttpAdapter(), {
    bodyParser: false,
    bufferLogs: true,
    autoFlushLogs: false,
    abortOnError: false,
  });
  const requestLogger = app.get<RequestLogger>(REQUEST_LOGGER);
  app.useLogger(new PinoNestLogger(requestLogger.logger));
  app.flushLogs();
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', requestLogger.onRequest);
  // The request line names the idempotency outcome, heard like metrics hear it: neither module imports the other.
  app.get(IdempotencyEvents).onOutcome((outcome, request) => addToRequestLine(request, 'idempotency', outcome));
  fastify.addHook('onRequest', app.get(Draining).onRequest);
  fastify.addHook('onResponse', app.get(HttpMetrics).onResponse);
  acceptJsonBodiesOnly(fastify);
  app.useGlobalFilters(new ProblemFilter());
  app.useGlobalPipes(app.get(VALIDATION_PIPE));
  serveOpenApiDocs(app);
  return app;
}
