import type { DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import type { AppConfig } from './config/app-config.js';
import { answerMalformedRequestsWithProblems } from './http/client-error.handler.js';
import { Draining } from './http/draining.js';
import { requireJsonContentType } from './http/json-content-type.middleware.js';
import { rejectUnacceptableJson } from './http/json-shape.middleware.js';
import { serveOpenApiDocs } from './http/openapi-docs.js';
import { ProblemFilter } from './http/problem.filter.js';
import { VALIDATION_PIPE } from './http/validation.js';
import { PinoNestLogger } from './logging/pino-nest-logger.js';
import { REQUEST_LOGGER, type RequestLogger } from './logging/request-logger.js';
import { HttpMetrics } from './metrics/http-metrics.js';

// Payment requests are a few hundred bytes; anything near this is abuse and gets a 413.
const BODY_LIMIT = '64kb';

/** The configured application, not yet listening: shared by main.ts and the benchmark's server. */
export async function createApp(
  config: AppConfig & { databaseUrl: string },
  extraImports: Array<Type | DynamicModule> = [],
): Promise<NestExpressApplication> {
  const root = AppModule.forRoot(config, extraImports);
  // Start-up lines wait for the JSON logger instead of going out in Nest's own format.
  const app = await NestFactory.create<NestExpressApplication>(root, { bodyParser: false, bufferLogs: true });
  const requestLogger = app.get<RequestLogger>(REQUEST_LOGGER);
  app.useLogger(new PinoNestLogger(requestLogger.logger));
  app.disable('x-powered-by');
  // Express would hash every body for an ETag; answers here are writes and per-client reads, never cached.
  app.set('etag', false);
  app.use(requestLogger.middleware);
  app.use(app.get(HttpMetrics).middleware);
  app.use(app.get(Draining).middleware);
  app.use(requireJsonContentType);
  app.useBodyParser('json', { limit: BODY_LIMIT });
  app.use(rejectUnacceptableJson);
  app.useGlobalFilters(new ProblemFilter());
  app.useGlobalPipes(app.get(VALIDATION_PIPE));
  answerMalformedRequestsWithProblems(app.getHttpServer());
  serveOpenApiDocs(app);
  return app;
}
