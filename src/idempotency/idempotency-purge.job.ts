import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { scheduleCronJob } from '../scheduling/cron-job.js';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { IdempotencyStore } from './idempotency.store.js';

export const PURGE_JOB_NAME = 'idempotency-purge';

// A run stops after this many batches and leaves the rest to the next tick, so it never runs for long.
const MAX_BATCHES_PER_RUN = 1000;

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

  /**
   * One purge run: batches until fewer than a full batch were due. Returns the rows deleted.
   * After each batch it rests as long as the batch took, so a large backlog uses at most half of
   * one connection and of the database's time for it, and live traffic keeps the rest.
   */
  async purgeOnce(): Promise<number> {
    let purged = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
      const started = performance.now();
      const deleted = await this.store.purgeExpiredKeys();
      purged += deleted;
      if (deleted < this.options.purgeBatchSize) break;
      await sleep(performance.now() - started);
    }
    return purged;
  }
}
