import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, type HealthCheckResult, type HealthIndicatorFunction, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../auth/public.decorator.js';
import { NotReadyError } from './health.errors.js';
import { ApiHealth, ApiLive, ApiReady } from './health.openapi.js';
import { MigrationsHealthIndicator } from './migrations.health.js';

// A probe waits this long for PostgreSQL before calling it down; orchestrators time out at 1–5 s.
const DATABASE_PING_TIMEOUT_MS = 1_000;

/**
 * Probes for orchestrators and load balancers. Liveness never touches the database, so an outage
 * of PostgreSQL doesn't get every replica restarted; readiness does, and takes a replica out of
 * rotation until the database answers and carries this build's schema.
 */
@Public()
@Controller('health')
@ApiHealth()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly migrations: MigrationsHealthIndicator,
  ) {}

  @Get('live')
  @ApiLive()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @ApiReady()
  ready(): Promise<HealthCheckResult> {
    return this.checkOrProblem([
      () => this.database.pingCheck('database').withTimeout(DATABASE_PING_TIMEOUT_MS),
      () => this.migrations.isApplied('migrations'),
    ]);
  }

  private async checkOrProblem(indicators: HealthIndicatorFunction[]): Promise<HealthCheckResult> {
    try {
      return await this.health.check(indicators);
    } catch (error) {
      if (error instanceof ServiceUnavailableException) throw new NotReadyError(error.getResponse() as HealthCheckResult);
      throw error;
    }
  }
}
