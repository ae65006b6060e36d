import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { IDEMPOTENCY_OUTCOMES, IdempotencyEvents } from '../idempotency/idempotency.events.js';

/** Counts idempotency outcomes and purge runs, from the events the mechanism publishes. */
@Injectable()
export class IdempotencyMetrics {
  constructor(registry: Registry, events: IdempotencyEvents) {
    const outcomes = new Counter({
      name: 'idempotency_outcomes_total',
      help: `Idempotent requests by outcome (${IDEMPOTENCY_OUTCOMES.join(', ')})`,
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    // Every outcome is exported from the start, so that rate() works before its first occurrence.
    for (const outcome of IDEMPOTENCY_OUTCOMES) outcomes.inc({ outcome }, 0);
    const purgeRuns = new Counter({
      name: 'idempotency_purge_runs_total',
      help: 'Runs of the expired-key purge job by result',
      labelNames: ['result'] as const,
      registers: [registry],
    });
    purgeRuns.inc({ result: 'success' }, 0);
    purgeRuns.inc({ result: 'failure' }, 0);
    const purged = new Counter({ name: 'idempotency_purged_keys_total', help: 'Expired keys deleted by the purge job', registers: [registry] });

    events.onOutcome((outcome) => outcomes.inc({ outcome }));
    events.onPurge((run) => {
      purgeRuns.inc({ result: run.ok ? 'success' : 'failure' });
      if (run.ok) purged.inc(run.purged);
    });
  }
}
