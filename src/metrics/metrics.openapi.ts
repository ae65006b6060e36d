import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { ShuttingDownError } from '../http/http.errors.js';

/** `GET /metrics`: the Prometheus text, public like the probes. */
export function ApiMetrics(): MethodDecorator {
  return applyDecorators(
    ApiTags('metrics'),
    ApiOperation({
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description: 'HTTP traffic, idempotency outcomes, purge runs, reconciled operations, rate-limit store errors, the database pool and the process, in the Prometheus text format.',
    }),
    ApiOkResponse({
      description: 'The Prometheus text exposition format (`text/plain; version=0.0.4; charset=utf-8`).',
      headers: { 'Cache-Control': { description: 'Every scrape is fresh.', schema: { type: 'string', enum: ['no-store'] } } },
      content: { 'text/plain': { schema: { type: 'string', example: '# HELP http_requests_total HTTP requests answered\n# TYPE http_requests_total counter\n' } } },
    }),
    ApiProblems([new Error('example'), new ShuttingDownError()]),
  );
}
