import { Logger } from '@nestjs/common';
import { PgBoss } from 'pg-boss';
import type { Queryable } from '../database/query-rows.js';

// A worker fetches when a NOTIFY says a job can run (pg-boss's LISTEN/NOTIFY: the insert notifies, in
// the enqueuing transaction, when the job is runnable at once), and otherwise polls this often: for
// what no NOTIFY announces (a retry whose time has come, a notification missed while the listener was
// down or behind a transaction-mode pooler). Polling every 0.5 s instead, 4 workers cost an idle
// replica 8 fetches a second and a third of its CPU (see docs/benchmark.md).
const POLL_SECONDS = 2;

/**
 * The job queue: pg-boss on the service's own PostgreSQL (schema `pgboss`). A job is enqueued on the
 * caller's transaction (`send(db, …)`), so it exists exactly when the change that made it commits.
 * pg-boss fetches with SELECT … FOR UPDATE SKIP LOCKED: every replica works, and a job is active in
 * one of them at a time; a worker that dies stops sending heartbeats and its job is retried.
 * Knows nothing of webhooks or payments.
 */
export class JobQueue {
  private readonly logger = new Logger(JobQueue.name);
  private readonly boss: PgBoss;

  /**
   * `maintain`: this process works the queues, so it also runs pg-boss's supervision (expiring dead
   * runs) and listens for new jobs; false for a one-off command, which only enqueues.
   */
  constructor(connectionString: string, private readonly queues: Readonly<Record<string, QueueSettings>>, maintain: boolean) {
    // Its own small pool: the workers' fetches and heartbeats never wait behind the API's requests.
    // Supervision every 5 s: a run whose worker died is retried within its heartbeat (10 s) and that.
    // Listening holds one more connection.
    this.boss = new PgBoss({
      connectionString, max: maintain ? 4 : 1, application_name: 'pagos-jobs',
      supervise: maintain, schedule: false, monitorIntervalSeconds: 5, superviseIntervalSeconds: 5, useListenNotify: maintain,
    });
    this.boss.on('error', (error: Error) => this.logger.error(`job queue: ${error.message}`));
  }

  async start(): Promise<void> {
    await this.boss.start();
    for (const [name, settings] of Object.entries(this.queues)) {
      const options = {
        retryLimit: settings.crashRetries,
        retryDelay: 1,
        expireInSeconds: settings.expireInSeconds,
        heartbeatSeconds: 10,
        deleteAfterSeconds: 7 * 86400,
        notify: true,
      };
      // createQueue leaves a queue that exists as it was: the update brings it to these settings.
      await this.boss.createQueue(name, options);
      await this.boss.updateQueue(name, options);
    }
  }

  /**
   * Enqueues on `db`'s transaction; `startAfterSeconds` delays it. `group`: the job counts against
   * that group's `groupConcurrency` (see `work`).
   */
  async send(db: Queryable, name: string, data: object, { startAfterSeconds = 0, group }: SendOptions = {}): Promise<void> {
    await this.boss.send(name, data, {
      db: { executeSql: (text: string, values?: unknown[]) => db.query(text, values) },
      ...(startAfterSeconds > 0 && { startAfter: startAfterSeconds }),
      ...(group !== undefined && { group: { id: group } }),
    });
  }

  /** Enqueues every job of `jobs` on `db`'s transaction in one statement (pg-boss's `insert`). */
  async sendAll(db: Queryable, name: string, jobs: ReadonlyArray<{ readonly data: object; readonly group?: string }>): Promise<void> {
    if (jobs.length === 0) return;
    const inserts = jobs.map(({ data, group }) => ({ data, ...(group !== undefined && { group: { id: group } }) }));
    await this.boss.insert(name, inserts, { db: { executeSql: (text: string, values?: unknown[]) => db.query(text, values) } });
  }

  /**
   * Runs `handler` for the jobs of `name`: `workers` fetch loops, each taking up to `batchSize` jobs
   * and running them side by side, woken by a new job's NOTIFY. A job whose handler throws is failed
   * alone and retried (a crash: not the webhook schedule). Batches and `burstWhenBatchFull`: with one
   * job per fetch pg-boss waits its polling interval between fetches, and a backlog drained at 16
   * jobs/s (8 workers polling every 0.5 s); 8 a fetch, a full batch fetching the next at once,
   * drained it at 865 jobs/s (measured when batches were chosen).
   * `groupConcurrency`: at most this many jobs of one group are active at once, across every
   * process (pg-boss counts them in its fetch and skips a group at its limit; jobs without a group
   * are not limited).
   */
  async work<T extends object>(name: string, { workers, batchSize, groupConcurrency }: WorkSettings, handler: (data: T) => Promise<void>): Promise<void> {
    const options = {
      localConcurrency: workers, batchSize, burstWhenBatchFull: true, perJobResults: true,
      pollingIntervalSeconds: POLL_SECONDS, notifyPollingIntervalSeconds: POLL_SECONDS,
      ...(groupConcurrency !== undefined && { groupConcurrency }),
    } as const;
    await this.boss.work<T>(name, options, (jobs) =>
      Promise.all(
        jobs.map(async (job) => {
          try {
            await handler(job.data);
            return { id: job.id, status: 'completed' as const };
          } catch (error) {
            this.logger.error(`job ${name} ${job.id} failed, to be retried: ${(error as Error).message}`);
            return { id: job.id, status: 'failed' as const, output: { message: (error as Error).message } };
          }
        }),
      ),
    );
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, timeout: 5_000 });
  }
}

export interface QueueSettings {
  /** Retries of a job whose run failed unexpectedly (crash, lost database): not the webhook schedule. */
  readonly crashRetries: number;
  /** A run active longer than this is presumed dead and retried. */
  readonly expireInSeconds: number;
}

export interface SendOptions {
  readonly startAfterSeconds?: number;
  readonly group?: string;
}

export interface WorkSettings {
  /** Fetch loops in this process; a loop fetches its next batch once every job of the last has ended. */
  readonly workers: number;
  readonly batchSize: number;
  readonly groupConcurrency?: number;
}
