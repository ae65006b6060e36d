import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { createDailyPartitions, dropExpiredDailyPartitions, type ExpiringTable, SECONDS_PER_DAY } from '../database/daily-partitions.js';
import { pgPoolOf } from '../database/query-rows.js';
import { SESSION_DATABASE_URL } from '../database/session-database-url.js';
import { scheduleCronJob } from '../scheduling/cron-job.js';
import { EVENTOS_OPTIONS, type EventosOptions } from './eventos.options.js';

// Days of partitions kept ready ahead: an event (and the payment writing it) finds no partition only if
// the purge has failed for a week. The migration creates as many.
export const EVENT_PARTITION_DAYS_AHEAD = 7;

// Deliveries first: they have no foreign key to their event (migration 1764700030500), so a day's
// events go only once no delivery of theirs is left to read them.
const PARTITIONED = ['webhook_deliveries', 'eventos'] as const;

/**
 * Keeps the partitions of `eventos` and `webhook_deliveries` rotating on a schedule: creates the days
 * ahead, drops each day once wholly older than EVENTS_TTL_DAYS (a DROP of a table, not a DELETE of
 * its rows), safe with N replicas. An event is kept between TTL and TTL + 1 day.
 */
@Injectable()
export class EventosPurgeJob implements OnApplicationBootstrap {
  private readonly logger = new Logger(EventosPurgeJob.name);
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly scheduler: SchedulerRegistry,
    @Inject(EVENTOS_OPTIONS) private readonly options: EventosOptions,
    @Inject(SESSION_DATABASE_URL) private readonly sessionUrl: string,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  onApplicationBootstrap(): void {
    scheduleCronJob(this.scheduler, {
      name: 'eventos-purge',
      cronTime: this.options.purgeCron,
      logger: this.logger,
      // What a failed run could not drop stays readable a day longer; partitions stay created days ahead.
      what: 'purge of expired events',
      run: (stopping) => this.purgeOnce(stopping),
      succeeded: () => undefined,
      failed: () => undefined,
    });
  }

  /** One run: partitions created ahead, expired days dropped (each logged). Returns the expired events dropped. */
  async purgeOnce(stopping?: AbortSignal): Promise<number> {
    for (const table of PARTITIONED) {
      const created = await createDailyPartitions(this.pool, table, EVENT_PARTITION_DAYS_AHEAD * SECONDS_PER_DAY);
      if (created > 0) this.logger.log(`created ${created} partitions of ${table} ahead`);
    }
    const retainedSeconds = this.options.ttlDays * SECONDS_PER_DAY;
    const expiring: ExpiringTable[] = PARTITIONED.map((table) => ({ table, retainedSeconds }));
    let purged = 0;
    for (const { table, name, rows } of await dropExpiredDailyPartitions(this.sessionUrl, expiring, stopping)) {
      this.logger.log(`dropped partition ${name}: about ${rows} rows of ${table} older than ${this.options.ttlDays} days`);
      if (table === 'eventos') purged += rows;
    }
    return purged;
  }
}
