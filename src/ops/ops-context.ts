import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfig } from '../config/app-config.js';
import { describeDatabase } from '../database/database-description.js';
import { startEmbeddedPostgres } from '../database/embedded-postgres.js';
import { IdempotencyStore } from '../idempotency/idempotency.store.js';
import { PagosReconciler } from '../pagos/pagos-reconciler.js';
import { WebhookOperations } from '../webhooks/webhook-operations.js';
import { connectProcessor, type ProcessorConnection } from '../bootstrap/processor-connection.js';
import { OpsModule } from './ops.module.js';

/** What a command works with. */
export interface OpsContext {
  readonly keys: IdempotencyStore;
  readonly reconciler: PagosReconciler;
  readonly webhooks: WebhookOperations;
}

/**
 * Runs `work` against the service's database with `config` (from `opsConfig()`; the embedded
 * PostgreSQL when DATABASE_URL is unset), then closes everything. Loaded by `withOps` only once a
 * command's arguments are checked: importing this file costs over a second.
 */
export async function withOpsContext<T>(config: AppConfig, work: (context: OpsContext) => Promise<T>): Promise<T> {
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ ...config.embeddedPg, persistent: true });
  // An orphan it adopts, it stops when done: say so, as the service does. Output stays the command's.
  if (embedded?.origin === 'adopted') console.error(describeDatabase(undefined, embedded));
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
    return await work({ keys: app.get(IdempotencyStore), reconciler: app.get(PagosReconciler), webhooks: app.get(WebhookOperations) });
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
