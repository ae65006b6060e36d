import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { IDEMPOTENCY_OUTCOMES, IdempotencyEvents } from '../idempotency/idempotency.events.js';

/** Counts idempotency outcomes, waits and purge runs, from the events the mechanism publishes. */
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
    const purged = new Counter({ name: 'idempotency_purged_keys_total', help: 'Expired keys the purge dropped with their partitions, as the tables\' statistics count them', registers: [registry] });

    const waits = new Histogram({
      name: 'idempotency_wait_duration_seconds',
      help: 'How long duplicates waited (Prefer: wait) for their key in flight, by the outcome they ended with',
      labelNames: ['outcome'] as const,
      // From a wake-up by notification (milliseconds) to the longest wait granted (IDEMPOTENCY_MAX_WAIT_SECONDS ≤ 60).
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    const listener = new Gauge({
      name: 'idempotency_listener_connected',
      help: 'Whether the LISTEN connection for settled keys is up (1); while it is down (0) waiters poll',
      registers: [registry],
    });
    const waiters = new Gauge({
      name: 'idempotency_waiters',
      help: 'Duplicates waiting for their key in flight right now (at most IDEMPOTENCY_MAX_WAITERS)',
      registers: [registry],
    });

    events.onOutcome((outcome) => outcomes.inc({ outcome }));
    events.onWaiters((waiting) => waiters.set(waiting));
    events.onWait((wait) => waits.observe({ outcome: wait.outcome }, wait.seconds));
    events.onListenerState((connected) => listener.set(connected ? 1 : 0));
    events.onPurge((run) => {
      purgeRuns.inc({ result: run.ok ? 'success' : 'failure' });
      if (run.ok) purged.inc(run.purged);
    });
  }
}
