import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { type AppConfig, loadConfig, readEnvironment } from '../config/app-config.js';
import { startEmbeddedPostgres } from '../database/embedded-postgres.js';
import { connectProcessor, type ProcessorConnection } from '../processor-connection.js';
import { OpsModule } from './ops.module.js';

/** Thrown for anything the operator must fix or decide; its message is the one line printed. */
export class OpsError extends Error {
  override readonly name = 'OpsError';
}

export interface OpsContext {
  readonly config: AppConfig;
  get<T>(type: new (...args: never[]) => T): T;
}

/**
 * Runs `work` against the service's database and configuration (the environment and `.env`, as the
 * service reads them; the embedded PostgreSQL when DATABASE_URL is unset), then closes everything.
 */
export async function withOpsContext<T>(work: (context: OpsContext) => Promise<T>): Promise<T> {
  const config = loadConfig(readEnvironment());
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ ...config.embeddedPg, persistent: true });
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  let app: INestApplicationContext | undefined;
  let processor: ProcessorConnection | undefined;
  try {
    // The reconciler asks the processor; the local one's state is in the database, so this one is it too.
    processor = await connectProcessor(config, databaseUrl);
    app = await NestFactory.createApplicationContext(OpsModule.forRoot({ ...config, databaseUrl, processor: processor.processor }), {
      logger: ['error', 'warn'],
    });
    stopScheduledJobs(app);
    const context = app;
    return await work({ config, get: (type) => context.get(type) });
  } finally {
    await app?.close();
    await processor?.stop();
    await embedded?.stop();
  }
}

// The modules schedule their jobs (purge, reconcile) at bootstrap; a command runs only what it is asked to.
function stopScheduledJobs(app: INestApplicationContext): void {
  for (const job of app.get(SchedulerRegistry).getCronJobs().values()) void job.stop();
}

/** The client id as API_TOKENS names it; an unknown one is an operator's typo, not an empty result. */
export function knownClient(config: AppConfig, clientId: string): string {
  const ids = config.apiClients.map((client) => client.clientId);
  if (!ids.includes(clientId)) throw new OpsError(`unknown client "${clientId}": API_TOKENS names ${ids.map((id) => `"${id}"`).join(', ')}`);
  return clientId;
}
