import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { type AppConfig, loadConfig, readEnvironment } from '../config/app-config.js';
import { startEmbeddedPostgres } from '../database/embedded-postgres.js';
import { OpsModule } from './ops.module.js';

/** Thrown for anything the operator must fix or decide; its message is the one line printed. */
export class OpsError extends Error {
  override readonly name = 'OpsError';
}

export interface OpsContext {
  get<T>(type: new (...args: never[]) => T): T;
}

/**
 * The service's configuration, as the service reads it (the environment and `.env`). Opens nothing,
 * so a command checks its arguments against it (`knownClient`) in milliseconds, before
 * `withOpsContext` spends seconds starting Nest and the database.
 */
export function opsConfig(): AppConfig {
  return loadConfig(readEnvironment());
}

/**
 * Runs `work` against the service's database with `config` (from `opsConfig()`; the embedded
 * PostgreSQL when DATABASE_URL is unset), then closes everything.
 */
export async function withOpsContext<T>(config: AppConfig, work: (context: OpsContext) => Promise<T>): Promise<T> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ ...config.embeddedPg, persistent: true });
  let app: INestApplicationContext | undefined;
  try {
    app = await NestFactory.createApplicationContext(OpsModule.forRoot({ ...config, databaseUrl: config.databaseUrl ?? embedded!.url }), {
      logger: ['error', 'warn'],
    });
    stopScheduledJobs(app);
    const context = app;
    return await work({ get: (type) => context.get(type) });
  } finally {
    await app?.close();
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
