import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Counter, Histogram, Registry } from 'prom-client';

// Requests that never matched a route (404s, bodies refused before routing) share one label value,
// so that arbitrary paths can't grow the series without bound.
const UNMATCHED_ROUTE = 'unmatched';
// Nest answers unknown paths from a catch-all route ("{/*splat}" on Express 5).
const CATCH_ALL_PATTERN = /^\{?\/\*/;

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

  /** Express middleware; registered first so that answers of the other middlewares count too. */
  readonly middleware = (request: Request, response: Response, next: NextFunction): void => {
    const stopTimer = this.duration.startTimer();
    response.once('finish', () => {
      const labels = { method: request.method, route: routeOf(request), status: String(response.statusCode) };
      this.requests.inc(labels);
      stopTimer(labels);
    });
    next();
  };
}

function routeOf(request: Request): string {
  const pattern: unknown = request.route?.path;
  return typeof pattern === 'string' && !CATCH_ALL_PATTERN.test(pattern) ? request.baseUrl + pattern : UNMATCHED_ROUTE;
}
