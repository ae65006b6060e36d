import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ScheduleModule } from '@nestjs/schedule';
import { AuthModule } from './auth/auth.module.js';
import { clientIdOf } from './auth/authenticated-client.js';
import type { AppConfig } from './config/app-config.js';
import { DatabaseModule } from './database/database.module.js';
import { EventosModule } from './eventos/eventos.module.js';
import { HealthModule } from './health/health.module.js';
import { Draining } from './http/draining.js';
import { createValidationPipe, VALIDATION_PIPE, validateRouteBody } from './http/validation.js';
import { IdempotencyModule } from './idempotency/idempotency.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { PagosModule } from './pagos/pagos.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { TIPOS_EVENTO_PAGO } from './pagos/pago-eventos.js';
import { ReembolsosModule } from './reembolsos/reembolsos.module.js';
import { TIPOS_EVENTO_REEMBOLSO } from './reembolsos/reembolso-eventos.js';
import { CronJobsShutdown } from './scheduling/cron-jobs-shutdown.js';
import { WebhookDeliveryModule } from './webhooks/webhook-delivery.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/** Composes the modules; `config.databaseUrl` must be resolved (see main.ts). */
@Module({})
export class AppModule {
  /** `extraImports`: modules a particular entry point adds (the benchmark's baseline route). */
  static forRoot(config: AppConfig & { databaseUrl: string }, extraImports: Array<Type | DynamicModule> = []): DynamicModule {
    const validationPipe = createValidationPipe();
    return {
      module: AppModule,
      imports: [
        // Validated against EnvSchema by main.ts already (it needs the values before the module graph
        // exists); @nestjs/config serves them to every module without reading the environment again.
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, skipProcessEnv: true, load: [() => config] }),
        LoggingModule,
        DatabaseModule.forRoot({
          url: config.databaseUrl,
          // LISTEN and the purge's lock need a session: their own URL when the pool goes through a transaction-mode pooler.
          sessionUrl: config.databaseListenUrl ?? config.databaseUrl,
          poolSize: config.dbPoolSize,
          runMigrationsOnStart: config.runMigrationsOnStart,
        }),
        ScheduleModule.forRoot(),
        AuthModule,
        RateLimitModule,
        MetricsModule,
        HealthModule,
        IdempotencyModule.forRoot({
          ...config.idempotency,
          scopeOf: clientIdOf,
          validateRequest: (context) => validateRouteBody(context, validationPipe),
        }),
        PagosModule,
        ReembolsosModule,
        WebhookDeliveryModule.forRoot({ databaseUrl: config.databaseUrl, ...config.webhooks, work: true }),
        EventosModule.forRoot({ ttlDays: config.eventsTtlDays, purgeCron: config.idempotency.purgeCron }),
        WebhooksModule.forRoot({ eventTypes: [...TIPOS_EVENTO_PAGO, ...TIPOS_EVENTO_REEMBOLSO], allowInsecureUrls: config.webhooks.allowInsecureUrls, maxPerClient: config.webhooks.maxPerClient }),
        ...extraImports,
      ],
      providers: [Draining, CronJobsShutdown, { provide: VALIDATION_PIPE, useValue: validationPipe }],
    };
  }
}
