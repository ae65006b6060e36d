import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleCronJob } from '../scheduling/cron-job.js';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { IdempotencyStore } from './idempotency.store.js';

export const PURGE_JOB_NAME = 'idempotency-purge';

/**
 * Keeps the partitions of `idempotency_keys` rotating on a schedule: creates the days ahead, drops the
 * days wholly expired (a DROP of a table, not a DELETE of its rows). Expired keys are already ignored
 * on read; a key expired today stays until its day's partition goes.
 */
@Injectable()
export class IdempotencyPurgeJob implements OnApplicationBootstrap {
  private readonly logger = new Logger(IdempotencyPurgeJob.name);

  constructor(
    private readonly store: IdempotencyStore,
    private readonly scheduler: SchedulerRegistry,
    private readonly events: IdempotencyEvents,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
  ) {}

  onApplicationBootstrap(): void {
    scheduleCronJob(this.scheduler, {
      name: PURGE_JOB_NAME,
      cronTime: this.options.purgeCron,
      logger: this.logger,
      // What a failed run could not drop is already ignored on read; partitions stay created days ahead.
      what: 'purge of expired idempotency keys',
      run: (stopping) => this.purgeOnce(stopping),
      succeeded: (purged) => {
        this.events.purge({ ok: true, purged });
      },
      failed: () => this.events.purge({ ok: false }),
    });
  }

  /** One run: partitions created ahead, expired ones dropped (each logged). Returns the expired keys dropped. */
  async purgeOnce(stopping?: AbortSignal): Promise<number> {
    const created = await this.store.createKeyPartitions();
    if (created > 0) this.logger.log(`created ${created} idempotency key partitions ahead`);
    let purged = 0;
    for (const { name, rows: keys } of await this.store.dropExpiredKeyPartitions(stopping)) {
      this.logger.log(`dropped partition ${name}: about ${keys} expired idempotency keys`);
      purged += keys;
    }
    return purged;
  }
}
