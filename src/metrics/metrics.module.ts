import { Global, Module } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { ReembolsosReconcilerModule } from '../reembolsos/reembolsos-reconciler.module.js';
import { ReembolsosMetrics } from './reembolsos-metrics.js';
import { DbPoolMetrics } from './db-pool-metrics.js';
import { HttpMetrics } from './http-metrics.js';
import { IdempotencyMetrics } from './idempotency-metrics.js';
import { MetricsController } from './metrics.controller.js';
import { PagosMetrics } from './pagos-metrics.js';
import { ProcessorWebhooksMetrics } from './processor-webhooks-metrics.js';
import { ProcessorWebhooksModule } from '../processor-webhooks/processor-webhooks.module.js';
import { RateLimitMetrics } from './rate-limit-metrics.js';
import { WebhooksMetrics } from './webhooks-metrics.js';
import { PagosReconcilerModule } from '../pagos/pagos-reconciler.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';

/**
 * `GET /metrics` in Prometheus format: HTTP traffic, idempotency outcomes, purge runs, reconciled payments,
 * rate-limit store errors, the DB pool, the process.
 */
@Global()
@Module({
  imports: [PagosReconcilerModule, ReembolsosReconcilerModule, RateLimitModule, ProcessorWebhooksModule],
  controllers: [MetricsController],
  providers: [
    {
      // One registry per app instance rather than prom-client's global one, so two apps in a process can't collide.
      provide: Registry,
      useFactory: () => {
        const registry = new Registry();
        collectDefaultMetrics({ register: registry });
        return registry;
      },
    },
    HttpMetrics,
    IdempotencyMetrics,
    // Refunds by result (the route's and the reconciler's).
    ReembolsosMetrics,
    DbPoolMetrics,
    PagosMetrics,
    RateLimitMetrics,
    // Webhook deliveries (WebhooksEvents comes from the global WebhookDeliveryModule).
    WebhooksMetrics,
    // The processor's webhooks taken in.
    ProcessorWebhooksMetrics,
  ],
  exports: [HttpMetrics],
})
export class MetricsModule {}
