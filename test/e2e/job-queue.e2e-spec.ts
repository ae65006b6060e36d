import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PgBoss } from 'pg-boss';
import { JobQueue } from '../../src/webhooks/job-queue.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { waitFor } from '../support/waiting.js';

const QUEUE = 'wake-test';
// Behind NOTIFY a worker polls every 2 s: a job it takes well within that was woken, not polled for.
const WOKEN_WITHIN_MS = 1_000;
// Pauses between the jobs, so that they are sent at scattered moments of a 2 s poll's cycle.
const PAUSES_MS = [300, 700, 1_100, 1_500, 1_900, 2_300];

/** The job queue on pg-boss, on real PostgreSQL: how its workers learn of a new job. */
describe('JobQueue', () => {
  let url: string;
  let queue: JobQueue | undefined;

  beforeAll(async () => {
    url = await createTestDatabase('job_queue');
    // The queue as an earlier version left it: its jobs announced by no NOTIFY.
    const earlier = new PgBoss({ connectionString: url, supervise: false, schedule: false });
    await earlier.start();
    await earlier.createQueue(QUEUE, { retryLimit: 10 });
    await earlier.stop({ graceful: false });
  });

  afterAll(async () => {
    await queue?.stop();
  });

  it('brings a queue that exists to its settings: its new jobs notify', async () => {
    queue = new JobQueue(url, { [QUEUE]: { crashRetries: 1, expireInSeconds: 30 } }, true);
    await queue.start();
    const db = await connect(url);
    try {
      const { rows } = await db.query('SELECT notify, retry_limit FROM pgboss.queue WHERE name = $1', [QUEUE]);
      expect(rows).toEqual([{ notify: true, retry_limit: 1 }]);
    } finally {
      await db.end();
    }
  });

  it('wakes a worker the moment a job commits, without waiting for its poll', async () => {
    const takenAt = new Map<number, number>();
    await queue!.work<{ n: number }>(QUEUE, { workers: 1, batchSize: 1 }, async ({ n }) => {
      takenAt.set(n, Date.now());
    });
    const db = await connect(url);
    const delays: number[] = [];
    try {
      for (const [n, pause] of PAUSES_MS.entries()) {
        await sleep(pause);
        await db.query('BEGIN');
        await queue!.send(db, QUEUE, { n });
        const committedAt = Date.now();
        await db.query('COMMIT');
        delays.push((await waitFor(`job ${n} taken`, () => takenAt.get(n))) - committedAt);
      }
    } finally {
      await db.end();
    }
    // Found by polling alone, each job would wait a second or more about half the time.
    expect(Math.max(...delays)).toBeLessThan(WOKEN_WITHIN_MS);
  });
});
