import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { OLDEST_UNDELIVERED_SECONDS } from '../webhooks/deliveries.sql.js';
import { DELIVERY_RESULTS, WebhooksEvents } from '../webhooks/webhooks.events.js';

/** Webhook delivery: attempts by result, time from an event to its first 2xx, and the oldest event not yet acknowledged. */
@Injectable()
export class WebhooksMetrics {
  constructor(registry: Registry, events: WebhooksEvents, dataSource: DataSource) {
    const attempts = new Counter({
      name: 'pagos_webhook_deliveries_total',
      help: `Webhook delivery attempts by result (${DELIVERY_RESULTS.join(', ')})`,
      labelNames: ['result'] as const,
      registers: [registry],
    });
    for (const result of DELIVERY_RESULTS) attempts.inc({ result }, 0);
    events.onAttempt((result) => attempts.inc({ result }));
    const latency = new Histogram({
      name: 'pagos_webhook_event_to_delivery_seconds',
      help: 'Time from an event being written to its first 2xx from an endpoint',
      // From a healthy consumer's instant answer to the retry schedule's last hours.
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000, 86400],
      registers: [registry],
    });
    events.onDelivered((seconds) => latency.observe(seconds));
    const pool = pgPoolOf(dataSource);
    new Gauge({
      name: 'pagos_webhook_oldest_undelivered_event_age_seconds',
      help: 'Age of the oldest event with a delivery not yet acknowledged (0 when none)',
      registers: [registry],
      async collect() {
        const [row] = await queryRows<{ seconds: number | null }>(pool, OLDEST_UNDELIVERED_SECONDS, []);
        this.set(row?.seconds ?? 0);
      },
    });
  }
}
