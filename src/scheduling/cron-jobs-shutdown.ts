import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { stopCronJobs } from './cron-job.js';

/**
 * Lets the scheduled jobs' last runs finish before shutdown closes what they use: every
 * `beforeApplicationShutdown` hook ends before any `onApplicationShutdown` one, where TypeORM ends the pool.
 */
@Injectable()
export class CronJobsShutdown implements BeforeApplicationShutdown {
  constructor(private readonly scheduler: SchedulerRegistry) {}

  beforeApplicationShutdown(): Promise<void> {
    return stopCronJobs(this.scheduler);
  }
}
