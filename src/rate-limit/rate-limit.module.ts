import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { seconds, ThrottlerModule } from '@nestjs/throttler';
import type { AppConfig } from '../config/app-config.js';

/**
 * Fixed windows counted in this process's memory: behind N replicas a client may get up to N times
 * the limit. A shared store (Redis, PostgreSQL) is the step up when that matters. ThrottlerModule is
 * global, so `@RateLimited()` works on any module's routes.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<AppConfig, true>) => {
        const { requests, windowSeconds } = config.get('rateLimit', { infer: true });
        return { throttlers: [{ limit: requests, ttl: seconds(windowSeconds) }] };
      },
    }),
  ],
})
export class RateLimitModule {}
