import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { scheduleCronJob } from '../../src/scheduling/cron-job.js';
import { CronJobsShutdown } from '../../src/scheduling/cron-jobs-shutdown.js';

const RUN_MS = 600;

/** What happened, in order: the job's run and whatever closes after it (the pool, in the service). */
const happened: string[] = [];

@Injectable()
class SlowJob {
  constructor(scheduler: SchedulerRegistry) {
    scheduleCronJob(scheduler, {
      name: 'slow',
      cronTime: '* * * * * *',
      logger: new Logger('SlowJob'),
      what: 'slow run',
      run: async () => {
        happened.push('run started');
        await delay(RUN_MS);
        happened.push('run finished');
      },
      succeeded: () => undefined,
      failed: () => happened.push('run failed'),
    });
  }
}

@Injectable()
class Pool implements OnApplicationShutdown {
  onApplicationShutdown(): void {
    happened.push('pool closed');
  }
}

describe('CronJobsShutdown', () => {
  it('a run going when the app closes finishes before anything closes on shutdown, and no run starts after', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot()],
      providers: [SlowJob, Pool, CronJobsShutdown],
    }).compile();
    const app = await moduleRef.init();
    const started = Date.now();
    while (!happened.includes('run started')) {
      if (Date.now() - started > 5_000) throw new Error('the job never ran');
      await delay(10);
    }
    await app.close();
    expect(happened).toEqual(['run started', 'run finished', 'pool closed']);
    await delay(1_200);
    expect(happened).toEqual(['run started', 'run finished', 'pool closed']);
  });
});
