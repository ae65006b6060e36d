import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { REFUND_RESULTS, ReembolsosEvents } from '../reembolsos/reembolsos.events.js';

/** How refunds ended, from the events the refunds feature publishes (the route's and the reconciler's). */
@Injectable()
export class ReembolsosMetrics {
  constructor(registry: Registry, events: ReembolsosEvents) {
    const refunds = new Counter({
      name: 'pagos_refunds_total',
      help: `Refunds by result (${REFUND_RESULTS.join(', ')})`,
      labelNames: ['result'] as const,
      registers: [registry],
    });
    for (const result of REFUND_RESULTS) refunds.inc({ result }, 0);
    events.onRefund((result) => refunds.inc({ result }));
  }
}
