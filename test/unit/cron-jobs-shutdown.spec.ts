import { setTimeout as delay } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { scheduleCronJob } from '../../src/scheduling/cron-job.js';
import { CronJobsShutdown } from '../../src/scheduling/cron-jobs-shutdown.js';

/** What happened, in order: the job's run and whatever closes after it (the pool, in the service). */
let happened: string[] = [];

const JOB_RUN = Symbol('JOB_RUN');

/** A job ticking every second that runs `run`; the tests choose what a run does. */
@Injectable()
class EverySecondJob {
  constructor(scheduler: SchedulerRegistry, @Inject(JOB_RUN) run: (stopping: AbortSignal) => Promise<void>) {
    scheduleCronJob(scheduler, {
      name: 'every-second',
      cronTime: '* * * * * *',
      logger: new Logger('EverySecondJob'),
      what: 'a run',
      run: async (stopping) => {
        happened.push('run started');
        await run(stopping);
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

/** Starts the app, waits for its job's first run to start, and closes the app. */
async function closeDuringARun(run: (stopping: AbortSignal) => Promise<void>): Promise<void> {
  const moduleRef = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot()],
    providers: [EverySecondJob, Pool, CronJobsShutdown, { provide: JOB_RUN, useValue: run }],
  }).compile();
  const app = await moduleRef.init();
  const deadline = Date.now() + 5_000;
  while (!happened.includes('run started')) {
    if (Date.now() > deadline) throw new Error('the job never ran');
    await delay(10);
  }
  await app.close();
}

describe('CronJobsShutdown', () => {
  beforeEach(() => {
    happened = [];
  });

  it('a run going when the app closes finishes before anything closes on shutdown, and no run starts after', async () => {
    await closeDuringARun(() => delay(600));
    expect(happened).toEqual(['run started', 'run finished', 'pool closed']);
    await delay(1_200);
    expect(happened).toEqual(['run started', 'run finished', 'pool closed']);
  });

  it('a run that waits on its stopping signal ends there, before the pool closes, and is not counted as failed', async () => {
    // Not aborted, the close would wait the whole minute and the run would finish: the test's timeout.
    await closeDuringARun((stopping) => delay(60_000, undefined, { signal: stopping }));
    expect(happened).toEqual(['run started', 'pool closed']);
  });
});
