import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfig } from '../config/app-config.js';
import { startEmbeddedPostgres } from '../database/embedded-postgres.js';
import { IdempotencyStore } from '../idempotency/idempotency.store.js';
import { PagosReconciler } from '../pagos/pagos-reconciler.js';
import { OpsModule } from './ops.module.js';

/** What a command works with. */
export interface OpsContext {
  readonly keys: IdempotencyStore;
  readonly reconciler: PagosReconciler;
}

/**
 * Runs `work` against the service's database with `config` (from `opsConfig()`; the embedded
 * PostgreSQL when DATABASE_URL is unset), then closes everything. Loaded by `withOps` only once a
 * command's arguments are checked: importing this file costs over a second.
 */
export async function withOpsContext<T>(config: AppConfig, work: (context: OpsContext) => Promise<T>): Promise<T> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ ...config.embeddedPg, persistent: true });
  let app: INestApplicationContext | undefined;
  try {
    app = await NestFactory.createApplicationContext(OpsModule.forRoot({ ...config, databaseUrl: config.databaseUrl ?? embedded!.url }), {
      logger: ['error', 'warn'],
    });
    stopScheduledJobs(app);
    return await work({ keys: app.get(IdempotencyStore), reconciler: app.get(PagosReconciler) });
  } finally {
    await app?.close();
    await embedded?.stop();
  }
}

// The modules schedule their jobs (purge, reconcile) at bootstrap; a command runs only what it is asked to.
function stopScheduledJobs(app: INestApplicationContext): void {
  for (const job of app.get(SchedulerRegistry).getCronJobs().values()) void job.stop();
}
