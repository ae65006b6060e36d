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
  /** `stopping` is aborted at shutdown: a long run may end early there, by throwing its reason. */
  run(stopping: AbortSignal): Promise<T>;
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
  const stopping = new AbortController();
  const tick = async (): Promise<void> => {
    let result: T;
    try {
      result = await job.run(stopping.signal);
    } catch (error) {
      if (stopping.signal.aborted) {
        job.logger.log(`${job.what} stopped by the shutdown; the next run goes on from where it is`);
        return;
      }
      job.failed();
      job.logger.error(`${job.what} failed: ${(error as Error).message}`);
      return;
    }
    job.succeeded(result);
  };
  const cronJob = CronJob.from({ cronTime: job.cronTime, onTick: tick, waitForCompletion: true, start: true });
  scheduler.addCronJob(job.name, cronJob);
  scheduled.set(scheduler, [...(scheduled.get(scheduler) ?? []), { cronJob, stopping }]);
}

// The jobs scheduleCronJob started, by registry: @nestjs/schedule forgets a job when it stops it.
const scheduled = new WeakMap<SchedulerRegistry, { cronJob: CronJob; stopping: AbortController }[]>();

/**
 * Stops the jobs `scheduleCronJob` started on `scheduler`, aborts their `stopping` signal, and
 * resolves once none is running. At shutdown @nestjs/schedule stops them without waiting, and a run
 * still going then fails on a closed pool (CI saw `reconcile pass failed: Cannot use a pool after
 * calling end on the pool`).
 */
export async function stopCronJobs(scheduler: SchedulerRegistry): Promise<void> {
  const jobs = scheduled.get(scheduler) ?? [];
  for (const { stopping } of jobs) stopping.abort(new Error('the service is shutting down'));
  // With waitForCompletion, cron's stop() resolves once the running tick has finished.
  await Promise.all(jobs.map(({ cronJob }) => cronJob.stop()));
}
