import { Global, Module } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { DbPoolMetrics } from './db-pool-metrics.js';
import { HttpMetrics } from './http-metrics.js';
import { IdempotencyMetrics } from './idempotency-metrics.js';
import { MetricsController } from './metrics.controller.js';
import { RateLimitMetrics } from './rate-limit-metrics.js';

/** `GET /metrics` in Prometheus format: HTTP traffic, idempotency outcomes, purge runs, rate-limit store errors, the DB pool, the process. */
@Global()
@Module({
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
    DbPoolMetrics,
    RateLimitMetrics,
  ],
  exports: [HttpMetrics, RateLimitMetrics],
})
export class MetricsModule {}
