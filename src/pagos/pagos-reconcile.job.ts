import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import type { AppConfigService } from '../config/app-config.js';
import { PagosEvents } from './pagos.events.js';
import { PagosReconciler } from './pagos-reconciler.js';

export const RECONCILE_JOB_NAME = 'pagos-reconcile';

/** Runs a reconciler pass on `PAGOS_RECONCILE_CRON`; a failed pass is logged, counted and retried at the next tick. */
@Injectable()
export class PagosReconcileJob implements OnApplicationBootstrap {
  private readonly logger = new Logger(PagosReconcileJob.name);

  constructor(
    private readonly reconciler: PagosReconciler,
    private readonly scheduler: SchedulerRegistry,
    private readonly events: PagosEvents,
    @Inject(ConfigService) private readonly config: AppConfigService,
  ) {}

  onApplicationBootstrap(): void {
    const cronTime = this.config.get('pagos', { infer: true }).reconcileCron;
    const job = CronJob.from({ cronTime, onTick: () => this.tick(), waitForCompletion: true, start: true });
    this.scheduler.addCronJob(RECONCILE_JOB_NAME, job);
  }

  private async tick(): Promise<void> {
    try {
      await this.reconciler.reconcileOnce();
      this.events.reconcileRun(true);
    } catch (error) {
      // Every write of a pass is conditional and committed per payment: the next tick just goes on.
      this.events.reconcileRun(false);
      this.logger.error(`reconcile pass failed: ${(error as Error).message}`);
    }
  }
}
