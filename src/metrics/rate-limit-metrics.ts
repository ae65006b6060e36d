import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { RateLimitEvents } from '../rate-limit/rate-limit.events.js';

/** What the rate limiter reports: requests let through uncounted because its shared store failed. */
@Injectable()
export class RateLimitMetrics {
  constructor(registry: Registry, events: RateLimitEvents) {
    // Exported at 0 from the start, so that rate() and alerts work before the first failure.
    const storeErrors = new Counter({
      name: 'rate_limit_store_errors_total',
      help: 'Rate-limited requests let through without being counted because the rate-limit store (Redis) failed',
      registers: [registry],
    });
    events.onStoreError(() => storeErrors.inc());
  }
}
