import { setTimeout } from 'node:timers/promises';
import type pg from 'pg';
import type { BenchCounters } from './bench.module.js';
import { databaseBackends, type PostgresCpu, postgresCpu, postgresCpuMicrosBetween } from './postgres-cpu.js';
import { type BenchProcessor, PROCESSOR_APPLICATION_NAME } from './processor-process.js';

// Requests dropped by the load generator at its end are answered within their latency; this bounds one that never is.
const MAX_DRAIN_MS = 30_000;
const DRAIN_POLL_MS = 50;

export interface Reading extends BenchCounters {
  readonly postgresCpu: PostgresCpu;
  readonly processorCpu: number | undefined;
}

/** What one request cost, on average, between two readings. */
export interface CostPerRequest {
  readonly roundTripsPerRequest: number;
  /** CPU time of the service process (Node); PostgreSQL's and the processor's are not included. */
  readonly serviceCpuMsPerRequest: number;
  /** CPU time of the bench database's PostgreSQL backends, when the server runs on this machine. */
  readonly postgresCpuMsPerRequest: number | undefined;
  /** The part of `postgresCpuMsPerRequest` spent by the backends serving the processor. */
  readonly processorPostgresCpuMsPerRequest: number | undefined;
  /** CPU time of the processor's process (its PostgreSQL backends are not included). */
  readonly processorCpuMsPerRequest: number | undefined;
}

/**
 * Readings of what the service, PostgreSQL and the processor have spent so far, each taken with no
 * request in flight, and the cost per request between two of them: divided by the requests the
 * server received, those the load generator dropped at its end included, as they were charged.
 */
export class CpuReadings {
  constructor(
    private readonly counters: () => Promise<BenchCounters>,
    private readonly processor: BenchProcessor,
    private readonly db: pg.Client,
  ) {}

  async read(): Promise<Reading> {
    const deadline = Date.now() + MAX_DRAIN_MS;
    let service = await this.counters();
    while (service.unanswered > 0) {
      if (Date.now() > deadline) throw new Error(`${service.unanswered} requests still unanswered after ${MAX_DRAIN_MS} ms`);
      await setTimeout(DRAIN_POLL_MS);
      service = await this.counters();
    }
    return { ...service, postgresCpu: postgresCpu(), processorCpu: this.processor.cpuMicros() };
  }

  async costBetween(before: Reading, after: Reading): Promise<CostPerRequest> {
    const requests = after.requests - before.requests;
    const perRequest = (micros: number | undefined) => (micros === undefined ? undefined : round(micros / 1000 / requests));
    const backends = await databaseBackends(this.db);
    const processorBackends = new Set([...backends].filter(([, name]) => name === PROCESSOR_APPLICATION_NAME).map(([pid]) => pid));
    return {
      roundTripsPerRequest: round((after.roundTrips - before.roundTrips) / requests),
      serviceCpuMsPerRequest: round((after.cpuMicros - before.cpuMicros) / 1000 / requests),
      postgresCpuMsPerRequest: perRequest(postgresCpuMicrosBetween(before.postgresCpu, after.postgresCpu, new Set(backends.keys()))),
      processorPostgresCpuMsPerRequest: perRequest(postgresCpuMicrosBetween(before.postgresCpu, after.postgresCpu, processorBackends)),
      processorCpuMsPerRequest: perRequest(after.processorCpu === undefined ? undefined : after.processorCpu - before.processorCpu!),
    };
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
