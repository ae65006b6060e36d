import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';

/** Up when every migration this build ships has been applied to the database. */
@Injectable()
export class MigrationsHealthIndicator {
  constructor(
    private readonly dataSource: DataSource,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async isApplied<const Key extends string>(key: Key) {
    const indicator = this.indicators.check(key);
    try {
      const pending = await this.dataSource.showMigrations();
      return pending ? indicator.down({ message: 'migrations are pending: run npm run migration:run' }) : indicator.up();
    } catch {
      // The database check beside this one says why; the migrations are simply unknown.
      return indicator.down({ message: 'could not read the applied migrations' });
    }
  }
}
