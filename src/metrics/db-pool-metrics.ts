import { Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';

/** The node-postgres pool behind TypeORM, read at each scrape: open, idle and waiting-for-a-connection counts. */
@Injectable()
export class DbPoolMetrics {
  constructor(registry: Registry, dataSource: DataSource) {
    const pool = (): Pool | undefined => (dataSource.driver as PostgresDriver).master as Pool | undefined;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Connections of the database pool by state (total open, idle, in use) and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const current = pool();
        if (!current) return;
        this.set({ state: 'total' }, current.totalCount);
        this.set({ state: 'idle' }, current.idleCount);
        this.set({ state: 'in_use' }, current.totalCount - current.idleCount);
        this.set({ state: 'waiting' }, current.waitingCount);
      },
    });
    new Gauge({
      name: 'db_pool_max_connections',
      help: 'Configured size of the database pool (DB_POOL_SIZE)',
      registers: [registry],
      collect() {
        this.set((pool()?.options.max as number | undefined) ?? 0);
      },
    });
  }
}
