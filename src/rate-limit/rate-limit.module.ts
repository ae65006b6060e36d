import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { seconds, ThrottlerModule, type ThrottlerStorage } from '@nestjs/throttler';
import type { AppConfig } from '../config/app-config.js';
import { RateLimitMetrics } from '../metrics/rate-limit-metrics.js';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';

const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');

/**
 * The counters: in Redis when `REDIS_URL` is set (shared by every replica), else in this process.
 * A provider of its own, so that Nest closes the Redis connection at shutdown.
 */
@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [ConfigService, RateLimitMetrics],
      useFactory: (config: ConfigService<AppConfig, true>, metrics: RateLimitMetrics): ThrottlerStorage => {
        const { redisUrl, redisKeyPrefix } = config.get('rateLimit', { infer: true });
        return redisUrl ? new RedisThrottlerStorage(redisUrl, redisKeyPrefix, metrics) : new MemoryThrottlerStorage();
      },
    },
  ],
  exports: [RATE_LIMIT_STORAGE],
})
class RateLimitStorageModule {}

/**
 * Fixed windows per client (`fixed-window.ts`). ThrottlerModule is global, so `@RateLimited()`
 * works on any module's routes.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [ConfigService, RATE_LIMIT_STORAGE],
      useFactory: (config: ConfigService<AppConfig, true>, storage: ThrottlerStorage) => {
        const { requests, windowSeconds } = config.get('rateLimit', { infer: true });
        return { throttlers: [{ limit: requests, ttl: seconds(windowSeconds) }], storage };
      },
    }),
  ],
})
export class RateLimitModule {}
