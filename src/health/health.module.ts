import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller.js';
import { MigrationsHealthIndicator } from './migrations.health.js';

/** `GET /health/live` and `GET /health/ready` (@nestjs/terminus). */
@Module({
  // Terminus logs every failed check itself; the problem answer and the request log already say it.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [MigrationsHealthIndicator],
})
export class HealthModule {}
