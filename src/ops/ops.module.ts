import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ScheduleModule } from '@nestjs/schedule';
import { clientIdOf } from '../auth/authenticated-client.js';
import type { AppConfig } from '../config/app-config.js';
import { DatabaseModule } from '../database/database.module.js';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { PagosReconcilerModule } from '../pagos/pagos-reconciler.module.js';
import { ReembolsosReconcilerModule } from '../reembolsos/reembolsos-reconciler.module.js';
import { CronJobsShutdown } from '../scheduling/cron-jobs-shutdown.js';
import { WebhookDeliveryModule } from '../webhooks/webhook-delivery.module.js';

// An operator's command needs a connection or two, never the service's whole pool.
const OPS_POOL_SIZE = 2;

/** The modules an operator's command works with, on the service's own configuration; no HTTP. */
@Module({})
export class OpsModule {
  static forRoot(config: AppConfig & { databaseUrl: string }): DynamicModule {
    return {
      module: OpsModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, skipProcessEnv: true, load: [() => config] }),
        DatabaseModule.forRoot({ url: config.databaseUrl, sessionUrl: config.databaseListenUrl ?? config.databaseUrl, poolSize: OPS_POOL_SIZE, runMigrationsOnStart: false }),
        ScheduleModule.forRoot(),
        // A command serves no requests, so no duplicate ever waits: no LISTEN connection either.
        IdempotencyModule.forRoot({
          ...config.idempotency,
          waiting: { defaultSeconds: 0, maxSeconds: 0, maxWaiters: 0 },
          scopeOf: clientIdOf,
        }),
        // Its settlements commit events, whose delivery jobs it enqueues (the service's replicas deliver them).
        WebhookDeliveryModule.forRoot({ databaseUrl: config.databaseUrl, ...config.webhooks, work: false }),
        PagosReconcilerModule,
        ReembolsosReconcilerModule,
      ],
      providers: [CronJobsShutdown],
    };
  }
}
