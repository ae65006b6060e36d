import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';

// Requests that matched no route (404s) share one label value,
// so that arbitrary paths can't grow the series without bound.
const UNMATCHED_ROUTE = 'unmatched';

/** Counts every HTTP request and its latency by method, route pattern and status. */
@Injectable()
export class HttpMetrics {
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route' | 'status'>;

  constructor(registry: Registry) {
    const labelNames = ['method', 'route', 'status'] as const;
    this.requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames, registers: [registry] });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to finishing its answer',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
  }

  /**
   * Fastify `onResponse` hook: runs once the answer is sent, whoever wrote it (a route, a hook, the
   * body parser, the not-found handler). `elapsedTime` counts from the request's arrival.
   */
  readonly onResponse = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const labels = { method: request.method, route: request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE), status: String(reply.statusCode) };
    this.requests.inc(labels);
    this.duration.observe(labels, reply.elapsedTime / 1000);
    done();
  };
}
