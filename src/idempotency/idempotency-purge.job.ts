import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { purgeInBatches } from '../database/purge-in-batches.js';
import { scheduleCronJob } from '../scheduling/cron-job.js';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { IdempotencyStore } from './idempotency.store.js';

export const PURGE_JOB_NAME = 'idempotency-purge';

/** Deletes expired keys on a schedule, batch by batch; expired keys are already ignored on read. */
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
      // The keys a failed run could not delete are already ignored on read.
      what: 'purge of expired idempotency keys',
      run: () => this.purgeOnce(),
      succeeded: (purged) => {
        this.events.purge({ ok: true, purged });
        if (purged > 0) this.logger.log(`purged ${purged} expired idempotency keys`);
      },
      failed: () => this.events.purge({ ok: false }),
    });
  }

  /** One purge run, batch by batch (see purgeInBatches). Returns the rows deleted. */
  purgeOnce(): Promise<number> {
    return purgeInBatches(() => this.store.purgeExpiredKeys(), this.options.purgeBatchSize);
  }
}
