import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from './app.js';
import { type AppConfig, ConfigError, loadConfig, readEnvironment } from './config/app-config.js';
import { Draining } from './http/draining.js';
import { DOCS_PATH } from './http/openapi-docs.js';
import { describeDatabase } from './database/database-description.js';
import { type RunningPostgres, startEmbeddedPostgres } from './database/embedded-postgres.js';
import { assertPortFree } from './bootstrap/port-check.js';
import { connectProcessor } from './bootstrap/processor-connection.js';
import { PinoNestLogger } from './logging/pino-nest-logger.js';
import { createRequestLogger } from './logging/request-logger.js';

const LISTEN_HOST = '0.0.0.0';
const IDLE_SWEEP_MS = 50;
// A repeat of the first signal within this is the same Ctrl-C arriving twice, not a second one.
const REPEATED_SIGNAL_MS = 1000;
const logger = new Logger('Bootstrap');

/**
 * The start-up log at `info` is one line per milestone — the database, the migrations (logged by
 * DatabaseModule), the processor, where it listens — and shutdown ends with `stopped`; Nest's
 * wiring is at `debug` (see PinoNestLogger).
 */
async function bootstrap(config: AppConfig): Promise<void> {
  // Lines logged before the app exists wait for its logger, then go out through it in order.
  Logger.attachBuffer();
  // What is up so far; a failed start stops it too, so that no database is left running.
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  let embedded: RunningPostgres | undefined;
  let nestReported = false;
  try {
    await assertPortFree(config.port, LISTEN_HOST);
    embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ ...config.embeddedPg, persistent: true });
    if (embedded) stops.push(embedded.stop);
    logger.log(describeDatabase(config.databaseUrl, embedded));
    const databaseUrl = config.databaseUrl ?? embedded!.url;
    const processor = await connectProcessor(config, databaseUrl);
    stops.push(processor.stop);
    // Nest reports its own start-up errors (a failed migration) before rethrowing them.
    nestReported = true;
    const app = await createApp({ ...config, databaseUrl, processor: processor.processor });
    nestReported = false;
    stops.push(() => app.close());
    logger.log(`processor: ${processor.description}`);
    if (processor.local) logger.warn('no Stripe key configured: payments go to the local processor, and no real money moves');
    else if (!processor.processor.webhookSecret) {
      logger.warn('no STRIPE_WEBHOOK_SECRET: POST /stripe/webhooks refuses every event, and outcomes that come after the answer wait for the reconciler');
    }
    if (config.webhooks.allowInsecureUrls) {
      logger.warn('WEBHOOKS_ALLOW_INSECURE_URLS=true: webhook URLs may use http and reach internal addresses (no SSRF protection); for development and tests only');
    }
    handleShutdownSignals(app, stopAll, embedded);
    await app.listen(config.port, LISTEN_HOST);
    // The bound port, not the configured one: PORT=0 means any free port, and this line names it.
    const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
    processor.listening(port);
    logger.log(`pagos listening on port ${port} (0.0.0.0): http://localhost:${port}, API docs at http://localhost:${port}/${DOCS_PATH}`);
  } catch (error) {
    // Before the app's logger existed, the buffered lines have nowhere to go: give them one.
    Logger.overrideLogger(new PinoNestLogger(createRequestLogger(config.log).logger));
    if (!nestReported) logger.error(isPortInUse(error) ? `port ${config.port} is in use: stop what listens there, or set PORT to a free port` : error);
    Logger.flush();
    await stopAll().catch((stopError: unknown) => logger.error(stopError));
    process.exit(1);
  }
}

/**
 * Handled here rather than by Nest's shutdown hooks, which re-raise the signal and exit non-zero.
 * Installed before listening, so that no signal can arrive while nobody handles it. A second signal,
 * a second or more after the first, exits at once; the embedded PostgreSQL this process owns still
 * gets its fast shutdown on 'exit'.
 */
function handleShutdownSignals(app: NestFastifyApplication, stopAll: () => Promise<void>, embedded: RunningPostgres | undefined): void {
  let stoppingSince: number | undefined;
  const shutdown = async (signal: string): Promise<void> => {
    if (stoppingSince !== undefined) {
      // `npm start` forwards the terminal's Ctrl-C to the service, which got it from the terminal too.
      if (Date.now() - stoppingSince < REPEATED_SIGNAL_MS) return;
      logger.warn(`${signal} again: exiting without finishing in-flight requests`);
      process.exit(1);
    }
    stoppingSince = Date.now();
    logger.log(`${signal}: finishing in-flight requests`);
    app.get(Draining).start();
    // Keep-alive connections go idle as their last answer is sent; close them then, not after 5 s.
    const server = app.getHttpServer() as Server;
    setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS).unref();
    // Nest closes the HTTP server (waiting for running requests) before the database pool; then
    // the local processor, then the embedded PostgreSQL.
    await stopAll();
    logger.log(stoppedLine(embedded));
    process.exit(0);
  };
  const onSignal = (signal: string): void => {
    shutdown(signal).catch((error: unknown) => {
      logger.error(error);
      process.exit(1);
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

// Another process (often another `npm start`) holds the port: the operator's to fix, so one line, no stack.
function isPortInUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
}

function stoppedLine(embedded: RunningPostgres | undefined): string {
  if (!embedded) return 'stopped';
  if (embedded.origin === 'shared') return `stopped; the embedded PostgreSQL keeps running for process ${embedded.ownerPid}, its owner`;
  return 'stopped, and the embedded PostgreSQL with it';
}

function main(): void {
  let config: AppConfig;
  try {
    config = loadConfig(readEnvironment());
  } catch (error) {
    // A bad environment is one line naming the variable; anything else keeps its stack.
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
  void bootstrap(config);
}

main();
