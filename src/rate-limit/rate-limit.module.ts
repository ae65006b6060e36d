import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { seconds, ThrottlerModule, type ThrottlerStorage } from '@nestjs/throttler';
import type { AppConfig } from '../config/app-config.js';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';
import { RateLimitEvents } from './rate-limit.events.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';

const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');

/**
 * The counters: in Redis when `REDIS_URL` is set (shared by every replica), else in this process.
 * A provider of its own, so that Nest closes the Redis connection at shutdown.
 */
@Module({
  providers: [
    RateLimitEvents,
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [ConfigService, RateLimitEvents],
      useFactory: (config: ConfigService<AppConfig, true>, events: RateLimitEvents): ThrottlerStorage => {
        const { redisUrl, redisKeyPrefix } = config.get('rateLimit', { infer: true });
        return redisUrl ? new RedisThrottlerStorage(redisUrl, redisKeyPrefix, events) : new MemoryThrottlerStorage();
      },
    },
  ],
  exports: [RATE_LIMIT_STORAGE, RateLimitEvents],
})
class RateLimitStorageModule {}

/**
 * Fixed windows per client (`fixed-window.ts`). ThrottlerModule is global, so `@RateLimited()`
 * works on any module's routes. Exports `RateLimitEvents`, for whoever counts the store's failures.
 */
@Module({
  imports: [
    RateLimitStorageModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [ConfigService, RATE_LIMIT_STORAGE],
      useFactory: (config: ConfigService<AppConfig, true>, storage: ThrottlerStorage) => {
        const { requests, windowSeconds } = config.get('rateLimit', { infer: true });
        return { throttlers: [{ limit: requests, ttl: seconds(windowSeconds) }], storage };
      },
    }),
  ],
  exports: [RateLimitStorageModule],
})
export class RateLimitModule {}
