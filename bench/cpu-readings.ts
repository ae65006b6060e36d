import { setTimeout } from 'node:timers/promises';
import type { BenchCounters } from './bench.module.js';
import { type PostgresCpu, postgresCpu, postgresCpuMicrosBetween } from './postgres-cpu.js';

// Requests dropped by the load generator at its end are answered within their latency; this bounds one that never is.
const MAX_DRAIN_MS = 30_000;
const DRAIN_POLL_MS = 50;

export interface Reading extends BenchCounters {
  readonly postgresCpu: PostgresCpu;
}

/** What one request cost, on average, between two readings. */
export interface CostPerRequest {
  readonly roundTripsPerRequest: number;
  /** CPU time of the service process (Node); PostgreSQL's is not included. */
  readonly serviceCpuMsPerRequest: number;
  /** CPU time of the PostgreSQL server's processes, when it runs on this machine. */
  readonly postgresCpuMsPerRequest: number | undefined;
}

/**
 * Readings of what the service and PostgreSQL have spent so far, each taken with no request in
 * flight, and the cost per request between two of them: divided by the requests the server
 * received, those the load generator dropped at its end included, as they were charged.
 */
export class CpuReadings {
  constructor(private readonly counters: () => Promise<BenchCounters>) {}

  async read(): Promise<Reading> {
    const deadline = Date.now() + MAX_DRAIN_MS;
    let service = await this.counters();
    while (service.unanswered > 0) {
      if (Date.now() > deadline) throw new Error(`${service.unanswered} requests still unanswered after ${MAX_DRAIN_MS} ms`);
      await setTimeout(DRAIN_POLL_MS);
      service = await this.counters();
    }
    return { ...service, postgresCpu: postgresCpu() };
  }

  costBetween(before: Reading, after: Reading): CostPerRequest {
    const requests = after.requests - before.requests;
    const postgresMicros = postgresCpuMicrosBetween(before.postgresCpu, after.postgresCpu);
    return {
      roundTripsPerRequest: round((after.roundTrips - before.roundTrips) / requests),
      serviceCpuMsPerRequest: round((after.cpuMicros - before.cpuMicros) / 1000 / requests),
      postgresCpuMsPerRequest: postgresMicros === undefined ? undefined : round(postgresMicros / 1000 / requests),
    };
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
