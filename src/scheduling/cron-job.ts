import type { Logger } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';

/** A job run on a cron schedule: what it does once, and whom it tells how that went. */
export interface CronJobSpec<T> {
  /** Its name in the SchedulerRegistry. */
  readonly name: string;
  readonly cronTime: string;
  readonly logger: Logger;
  /** What failed, for the error line: "purge of expired idempotency keys". */
  readonly what: string;
  run(): Promise<T>;
  succeeded(result: T): void;
  failed(): void;
}

/**
 * Runs `job.run()` on its schedule, one run at a time (a tick that comes while the last run still
 * goes is skipped). A scheduled job never fails silently: a failed run is logged and reported, and
 * the next tick tries again.
 *
 * @example
 *   scheduleCronJob(scheduler, { name: 'purge', cronTime: '0 *\/10 * * * *', logger, what: 'purge of old rows',
 *     run: () => purgeOnce(), succeeded: (purged) => events.purged(purged), failed: () => events.purgeFailed() });
 */
export function scheduleCronJob<T>(scheduler: SchedulerRegistry, job: CronJobSpec<T>): void {
  const tick = async (): Promise<void> => {
    let result: T;
    try {
      result = await job.run();
    } catch (error) {
      job.failed();
      job.logger.error(`${job.what} failed: ${(error as Error).message}`);
      return;
    }
    job.succeeded(result);
  };
  scheduler.addCronJob(job.name, CronJob.from({ cronTime: job.cronTime, onTick: tick, waitForCompletion: true, start: true }));
}
