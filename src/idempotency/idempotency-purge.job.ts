import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
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
    const job = CronJob.from({ cronTime: this.options.purgeCron, onTick: () => this.tick(), waitForCompletion: true, start: true });
    this.scheduler.addCronJob(PURGE_JOB_NAME, job);
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

  private async tick(): Promise<void> {
    try {
      const purged = await this.purgeOnce();
      this.events.purge({ ok: true, purged });
      if (purged > 0) this.logger.log(`purged ${purged} expired idempotency keys`);
    } catch (error) {
      // The next tick tries again; the keys it could not delete are already ignored on read.
      this.events.purge({ ok: false });
      this.logger.error(`purge of expired idempotency keys failed: ${(error as Error).message}`);
    }
  }
}
