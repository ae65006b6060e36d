import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiSchema, ApiTags, type SchemaObject } from '@nestjs/swagger';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { ShuttingDownError } from '../http/http.errors.js';
import { NotReadyError } from './health.errors.js';

// What a @nestjs/terminus indicator reports: `up` or `down`, and whatever it measured (`responseTime`).
const INDICATOR_RESULT: SchemaObject = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['up', 'down'] } },
  additionalProperties: true,
};
const INDICATOR_RESULTS = { type: 'object', additionalProperties: INDICATOR_RESULT } as const;

const READY_EXAMPLE = { database: { status: 'up', responseTime: 3 }, migrations: { status: 'up' } };

@ApiSchema({ name: 'HealthCheck', description: 'The result of @nestjs/terminus checks that all passed.' })
class HealthCheckResponse {
  @ApiProperty({ enum: ['ok'], description: 'Every check passed (a failing one makes the answer a 503 problem).' })
  readonly status!: 'ok';

  @ApiPropertyOptional({ ...INDICATOR_RESULTS, description: 'The checks that are up, by name.', example: READY_EXAMPLE })
  readonly info?: Record<string, unknown>;

  @ApiPropertyOptional({ ...INDICATOR_RESULTS, description: 'The checks that are down, by name (none on a 200).', example: {} })
  readonly error?: Record<string, unknown>;

  @ApiProperty({ ...INDICATOR_RESULTS, description: 'Every check, by name.', example: READY_EXAMPLE })
  readonly details!: Record<string, unknown>;
}

/** The member `not-ready` adds. */
class NotReadyMembers {
  @ApiProperty({ ...INDICATOR_RESULTS, description: 'Every check, by name; the failing ones are `down`.', example: { database: { status: 'down', message: 'timeout' } } })
  readonly checks!: Record<string, unknown>;
}

/** What both probes share: public, and the failures any request may meet. */
export function ApiHealth(): ClassDecorator {
  return applyDecorators(ApiTags('health'), ApiProblems([new Error('example'), new ShuttingDownError()]));
}

export function ApiLive(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'healthLive',
      summary: 'Liveness: the process answers',
      description: 'Never touches the database, so an outage of PostgreSQL does not get every replica restarted.',
    }),
    ApiOkResponse({ type: HealthCheckResponse, description: 'Alive (no checks: `info`, `error` and `details` are empty).' }),
  );
}

export function ApiReady(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'healthReady',
      summary: 'Readiness: the database answers and carries this build\'s schema',
      description: 'A replica that is not ready answers `503 not-ready` and should get no traffic until it is.',
    }),
    ApiOkResponse({ type: HealthCheckResponse, description: 'Ready: `database` and `migrations` are up.' }),
    // A route-level 503 replaces the controller's: every 503 of this route is listed here.
    ApiProblems([new ShuttingDownError()]),
    ApiProblems([new NotReadyError({ status: 'error', details: { database: { status: 'down', message: 'timeout' }, migrations: { status: 'up' } } })], NotReadyMembers),
  );
}
