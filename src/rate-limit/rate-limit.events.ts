import { Injectable } from '@nestjs/common';

/**
 * Where the rate limiter reports what went wrong with its counters, so that metrics can count it
 * without `rate-limit/` knowing about them: listeners subscribe, the Redis store publishes.
 */
@Injectable()
export class RateLimitEvents {
  private readonly storeErrorListeners: Array<() => void> = [];

  onStoreError(listener: () => void): void {
    this.storeErrorListeners.push(listener);
  }

  /** A request went through uncounted because the shared store failed. */
  storeError(): void {
    for (const listener of this.storeErrorListeners) listener();
  }
}
