import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { scheduleCronJob } from '../scheduling/cron-job.js';
import { EVENTOS_OPTIONS, type EventosOptions } from './eventos.options.js';
import { PURGE_EXPIRED_EVENTS } from './eventos.sql.js';

// Rows per DELETE, as the keys' purge: short statements that never hold many locks for long.
const PURGE_BATCH_SIZE = 1000;
// A run stops after this many batches and leaves the rest to the next tick.
const MAX_BATCHES_PER_RUN = 1000;

/** Deletes events past EVENTS_TTL_DAYS on a schedule, batch by batch, safe with N replicas. */
@Injectable()
export class EventosPurgeJob implements OnApplicationBootstrap {
  private readonly logger = new Logger(EventosPurgeJob.name);
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly scheduler: SchedulerRegistry,
    @Inject(EVENTOS_OPTIONS) private readonly options: EventosOptions,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  onApplicationBootstrap(): void {
    scheduleCronJob(this.scheduler, {
      name: 'eventos-purge',
      cronTime: this.options.purgeCron,
      logger: this.logger,
      what: 'purge of expired events',
      run: () => this.purgeOnce(),
      succeeded: (purged) => {
        if (purged > 0) this.logger.log(`purged ${purged} events older than ${this.options.ttlDays} days`);
      },
      failed: () => undefined,
    });
  }

  /** One run: batches until fewer than a full batch were due, resting as long as each batch took. Returns the rows deleted. */
  async purgeOnce(): Promise<number> {
    let purged = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
      const started = performance.now();
      const deleted = (await queryRows(this.pool, PURGE_EXPIRED_EVENTS, [this.options.ttlDays, PURGE_BATCH_SIZE])).length;
      purged += deleted;
      if (deleted < PURGE_BATCH_SIZE) break;
      await sleep(performance.now() - started);
    }
    return purged;
  }
}
