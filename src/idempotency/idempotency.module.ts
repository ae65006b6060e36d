import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { InFlightWaiter } from './in-flight-waiter.js';
import { ReplayCache } from './replay-cache.js';
import { KeySettledListener } from './key-settled-listener.js';
import { KeyWaiters } from './key-waiters.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { IdempotencyPurgeJob } from './idempotency-purge.job.js';
import { IdempotencyKeyRecord } from './idempotency-key-record.entity.js';
import { IdempotencyStore } from './idempotency.store.js';

/**
 * The idempotency mechanism, global so that any module's routes can use `@Idempotent()`.
 * Needs `DatabaseModule` (for `Transactions` and, to wait, `NotificationListener`) and `ScheduleModule.forRoot()` in the app.
 *
 * @example
 *   IdempotencyModule.forRoot({ ttlSeconds: 86400, lockTimeoutSeconds: 60, purgeCron: '0 *\/10 * * * *',
 *     scopeOf: (request) => request.user.id,
 *     waiting: { defaultSeconds: 0, maxSeconds: 10, maxWaiters: 1000 }, replayCache: { entries: 10000, seconds: 60 } })
 */
@Module({})
export class IdempotencyModule {
  static forRoot(options: IdempotencyOptions): DynamicModule {
    return {
      module: IdempotencyModule,
      global: true,
      imports: [TypeOrmModule.forFeature([IdempotencyKeyRecord])],
      providers: [
        { provide: IDEMPOTENCY_OPTIONS, useValue: options }, IdempotencyStore, IdempotencyEvents, IdempotencyInterceptor, IdempotencyPurgeJob,
        KeyWaiters, KeySettledListener, InFlightWaiter, ReplayCache,
      ],
      exports: [IDEMPOTENCY_OPTIONS, IdempotencyStore, IdempotencyEvents, IdempotencyInterceptor, IdempotencyPurgeJob, InFlightWaiter, ReplayCache],
    };
  }
}
