import { Injectable, Logger } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import { PagosEvents, RECONCILE_RESULTS } from '../pagos/pagos.events.js';
import { PagosReconciler } from '../pagos/pagos-reconciler.js';

/** The reconciler's work, from the events it publishes, and the backlog it works on, read at scrape time. */
@Injectable()
export class PagosMetrics {
  private static readonly logger = new Logger(PagosMetrics.name);

  constructor(registry: Registry, events: PagosEvents, reconciler: PagosReconciler) {
    const reconciled = new Counter({
      name: 'pagos_reconciled_total',
      help: `Abandoned payments the reconciler handled, by result (${RECONCILE_RESULTS.join(', ')}); skipped and unreachable count refunds too`,
      labelNames: ['result'] as const,
      registers: [registry],
    });
    for (const result of RECONCILE_RESULTS) reconciled.inc({ result }, 0);
    const runs = new Counter({
      name: 'pagos_reconcile_runs_total',
      help: 'Scheduled reconciler passes by result',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    runs.inc({ result: 'success' }, 0);
    runs.inc({ result: 'failure' }, 0);
    events.onReconciled((result) => reconciled.inc({ result }));
    events.onReconcileRun((ok) => runs.inc({ result: ok ? 'success' : 'failure' }));

    new Gauge({
      name: 'pagos_stale_pending',
      help: 'Payments PENDIENTE for longer than the lock timeout: waiting for the reconciler, or held by a live slow attempt',
      registers: [registry],
      async collect() {
        try {
          this.set(await reconciler.countStalePending());
        } catch (error) {
          // A scrape during a database outage still serves every other series; this one keeps its last value.
          PagosMetrics.logger.warn(`could not count stale payments: ${(error as Error).message}`);
        }
      },
    });
  }
}
