import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AppConfigService } from '../config/app-config.js';
import { scheduleCronJob } from '../scheduling/cron-job.js';
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
    scheduleCronJob(this.scheduler, {
      name: RECONCILE_JOB_NAME,
      cronTime: this.config.get('pagos', { infer: true }).reconcileCron,
      logger: this.logger,
      // Every write of a pass is conditional and committed per payment: the next tick just goes on.
      what: 'reconcile pass',
      run: () => this.reconciler.reconcileOnce(),
      succeeded: () => this.events.reconcileRun(true),
      failed: () => this.events.reconcileRun(false),
    });
  }
}
