import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';

/** What the rate limiter reports: requests let through uncounted because its shared store failed. */
@Injectable()
export class RateLimitMetrics {
  private readonly storeErrors: Counter;

  constructor(registry: Registry) {
    // Exported at 0 from the start, so that rate() and alerts work before the first failure.
    this.storeErrors = new Counter({
      name: 'rate_limit_store_errors_total',
      help: 'Rate-limited requests let through without being counted because the rate-limit store (Redis) failed',
      registers: [registry],
    });
  }

  countStoreError(): void {
    this.storeErrors.inc();
  }
}
