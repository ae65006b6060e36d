import 'reflect-metadata';
import type { Server } from 'node:http';
import { Logger } from '@nestjs/common';
import { createApp } from './app.js';
import { ConfigError, loadConfig, readEnvironment } from './config/app-config.js';
import { Draining } from './http/draining.js';
import { startEmbeddedPostgres } from './database/embedded-postgres.js';
import { connectProcessor } from './bootstrap/processor-connection.js';

const IDLE_SWEEP_MS = 50;

async function bootstrap(): Promise<void> {
  const config = loadConfig(readEnvironment());
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ ...config.embeddedPg, persistent: true });
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  const processor = await connectProcessor(config, databaseUrl);
  const app = await createApp({ ...config, databaseUrl, processor: processor.processor });
  const logger = new Logger('Bootstrap');
  if (processor.local) logger.warn('no Stripe key configured: payments go to the local processor, and no real money moves');

  // Handled here rather than by Nest's shutdown hooks, which re-raise the signal and exit non-zero.
  // Installed before listening, so that no signal can arrive while nobody handles it.
  const shutdown = async (signal: string): Promise<void> => {
    logger.log(`${signal}: finishing in-flight requests`);
    app.get(Draining).start();
    // Keep-alive connections go idle as their last answer is sent; close them then, not after 5 s.
    const server = app.getHttpServer() as Server;
    setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS).unref();
    // Nest closes the HTTP server (waiting for running requests) before the database pool.
    await app.close();
    await processor.stop();
    await embedded?.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  await app.listen(config.port, '0.0.0.0');
  logger.log(`payments go to ${processor.description}`);
  logger.log(`pagos listening on port ${config.port}${embedded ? ' (embedded PostgreSQL)' : ''}`);
}

bootstrap().catch((error: unknown) => {
  // A bad environment is one line naming the variable; anything else keeps its stack.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
