import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import type { AppConfigService } from '../config/app-config.js';
import { purgeInBatches } from '../database/purge-in-batches.js';
import { pgPoolOf } from '../database/query-rows.js';
import { scheduleCronJob } from '../scheduling/cron-job.js';
import { PURGAR_EVENTOS_APLICADOS } from './processor-webhooks.sql.js';

// Stripe redelivers for 3 days and keeps events 30, resendable by hand from its Dashboard until then:
// an id is kept as long as its event may still arrive.
const KEPT_DAYS = 30;
const PURGE_BATCH_SIZE = 1000;

/** Forgets the ids of processor events applied long ago, on the keys' purge schedule; safe with N replicas. */
@Injectable()
export class ProcessorEventsPurgeJob implements OnApplicationBootstrap {
  private readonly logger = new Logger(ProcessorEventsPurgeJob.name);
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly scheduler: SchedulerRegistry,
    @Inject(ConfigService) private readonly config: AppConfigService,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  onApplicationBootstrap(): void {
    scheduleCronJob(this.scheduler, {
      name: 'processor-events-purge',
      cronTime: this.config.get('idempotency', { infer: true }).purgeCron,
      logger: this.logger,
      what: 'purge of applied processor events',
      run: () => this.purgeOnce(),
      succeeded: (purged) => {
        if (purged > 0) this.logger.log(`forgot ${purged} processor events applied over ${KEPT_DAYS} days ago`);
      },
      failed: () => undefined,
    });
  }

  purgeOnce(): Promise<number> {
    return purgeInBatches(async () => (await this.pool.query(PURGAR_EVENTOS_APLICADOS, [KEPT_DAYS, PURGE_BATCH_SIZE])).rowCount ?? 0, PURGE_BATCH_SIZE);
  }
}
