import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { PROCESSOR_EVENT_OUTCOMES, ProcessorWebhooksEvents } from '../processor-webhooks/processor-webhooks.events.js';

/** The processor's webhooks taken in (`POST /stripe/webhooks`), by what became of each delivery. */
@Injectable()
export class ProcessorWebhooksMetrics {
  constructor(registry: Registry, events: ProcessorWebhooksEvents) {
    const received = new Counter({
      name: 'pagos_processor_events_total',
      help: `Deliveries of the processor's webhooks by outcome (${PROCESSOR_EVENT_OUTCOMES.join(', ')})`,
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    for (const outcome of PROCESSOR_EVENT_OUTCOMES) received.inc({ outcome }, 0);
    events.onReceived((outcome) => received.inc({ outcome }));
  }
}
