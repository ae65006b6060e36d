import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { Redis } from 'ioredis';
import { type ThrottlerStorageRecord, UNCOUNTED, windowRecord } from './fixed-window.js';
import type { RateLimitEvents } from './rate-limit.events.js';

/**
 * countRateLimitHit: one hit in a fixed window, atomically (a script runs alone in Redis, so two
 * replicas counting the same client at once get consecutive numbers: of N racers over the limit,
 * exactly `limit` get through). KEYS[1] is the window's counter, ARGV[1] the window in ms. Returns
 * the hits so far and the ms left; a counter without an expiry (a new window, or one that somehow
 * lost it) gets one, so no key outlives its window. Redis's clock is the only clock.
 */
const COUNT_RATE_LIMIT_HIT = `
local hits = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return { hits, left }
`;

// A rate-limit check must never hold a payment up: past this, the request goes through uncounted.
const COMMAND_TIMEOUT_MS = 500;
// Reconnect at most a second after Redis is back (ioredis's default waits up to 2 s).
const MAX_RECONNECT_DELAY_MS = 1000;

interface RedisWithRateLimitScript extends Redis {
  countRateLimitHit(key: string, windowMs: number): Promise<[number, number]>;
}

/**
 * Fixed-window counters in Redis (`REDIS_URL`), shared by every replica. Our own rather than a
 * package: `@nest-lab/throttler-storage-redis@1.2.0` and `@nestjs-redis/throttler-storage@1.0.0`
 * declare peers up to Nest 11 (npm refuses them next to Nest 12: ERESOLVE) and neither fails open.
 * ioredis is 5.x because typeorm 1.1.1 declares it as an optional peer (^5.0.4). Redis unreachable, slow or
 * failing: the limiter fails open (the request goes through, `rate_limit_store_errors_total` counts
 * it, one warning per outage) so payments keep flowing; ioredis reconnects on its own, and the first
 * counted request after that logs the recovery.
 */
export class RedisThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: RedisWithRateLimitScript;
  private failing = false;

  constructor(
    url: string,
    private readonly keyPrefix: string,
    private readonly events: RateLimitEvents,
  ) {
    this.redis = new Redis(url, {
      // Not connected: fail the command at once instead of queueing it until Redis comes back.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
      connectionName: 'pagos-rate-limit',
    }) as RedisWithRateLimitScript;
    this.redis.defineCommand('countRateLimitHit', { numberOfKeys: 1, lua: COUNT_RATE_LIMIT_HIT });
    // ioredis emits connection errors as events; unheard, they are printed as unhandled.
    this.redis.on('error', (error: Error) => this.reportFailure(error));
  }

  async increment(key: string, ttl: number, limit: number, _blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    try {
      const [hits, msLeft] = await this.redis.countRateLimitHit(`${this.keyPrefix}${throttlerName}:${key}`, ttl);
      this.reportRecovery();
      return windowRecord(hits, msLeft, limit);
    } catch (error) {
      this.events.storeError();
      this.reportFailure(error as Error);
      return UNCOUNTED;
    }
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }

  private reportFailure(error: Error): void {
    if (this.failing) return;
    this.failing = true;
    this.logger.warn(`rate-limit store (Redis) unavailable, requests go through uncounted until it is back: ${error.message}`);
  }

  private reportRecovery(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.log('rate-limit store (Redis) reachable again: the rate limit is enforced');
  }
}
