import { Logger } from '@nestjs/common';
import type { IdempotencyStore } from './idempotency.store.js';
import { RENEWALS_PER_LEASE } from './idempotency.constants.js';
import type { Claim } from './idempotency.types.js';

/** Renews a claim's lease while its handler runs, so a slow but live request is never taken over. */
export class LeaseKeeper {
  private static readonly logger = new Logger(LeaseKeeper.name);
  private readonly timer: NodeJS.Timeout;

  constructor(store: IdempotencyStore, claim: Claim, lockTimeoutSeconds: number) {
    const intervalMs = (lockTimeoutSeconds * 1000) / RENEWALS_PER_LEASE;
    this.timer = setInterval(() => {
      store.renewKey(claim).then(
        (renewed) => renewed || LeaseKeeper.logger.warn(`claim on key ${claim.key} was taken over while running`),
        (error: unknown) => LeaseKeeper.logger.warn(`lease renewal failed: ${(error as Error).message}`),
      );
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
