import { Controller, Get, Header } from '@nestjs/common';
import { Registry } from 'prom-client';
import { Public } from '../auth/public.decorator.js';
import { ApiMetrics } from './metrics.openapi.js';

/** Prometheus scrape endpoint. Unauthenticated, like /health: keep it off the public proxy. */
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  @ApiMetrics()
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
