import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { purgeInBatches } from '../database/purge-in-batches.js';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { scheduleCronJob } from '../scheduling/cron-job.js';
import { EVENTOS_OPTIONS, type EventosOptions } from './eventos.options.js';
import { PURGE_EXPIRED_EVENTS } from './eventos.sql.js';

// Rows per DELETE, as the keys' purge: short statements that never hold many locks for long.
const PURGE_BATCH_SIZE = 1000;

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

  /** One run, batch by batch (see purgeInBatches). Returns the rows deleted. */
  purgeOnce(): Promise<number> {
    return purgeInBatches(async () => (await queryRows(this.pool, PURGE_EXPIRED_EVENTS, [this.options.ttlDays, PURGE_BATCH_SIZE])).length, PURGE_BATCH_SIZE);
  }
}
