import type { DataSourceOptions } from 'typeorm';
import { ListenedPgClient } from './listened-pg-client.js';
import { MIGRATIONS } from '../../migrations/index.js';

export interface DatabaseSettings {
  readonly url: string;
  readonly poolSize: number;
}

export function dataSourceOptions(settings: DatabaseSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.url,
    migrations: MIGRATIONS,
    // Each migration in its own transaction, so a failed one leaves the earlier ones applied.
    migrationsTransactionMode: 'each',
    // The schema comes only from migrations/.
    synchronize: false,
    poolSize: settings.poolSize,
    extra: {
      // Fail fast when the database is unreachable instead of letting requests queue forever.
      connectionTimeoutMillis: 5_000,
      // A database whose machine died (or a partition) sends no FIN or RST: TCP keep-alive probes an
      // idle connection after 10 s of silence, so the pool finds it dead in seconds rather than at the
      // OS's 2-hour default. Behind HAProxy its health check cuts such sessions sooner (docs/deployment.md).
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // Connections stay open once opened (up to poolSize): pg-pool arms an idle timer on every release
      // only above `min`, and a pool that shrinks in a quiet spell reconnects when traffic returns.
      min: settings.poolSize,
      application_name: 'pagos',
      // Each statement goes out as soon as it is issued, without waiting for the previous answer:
      // Transactions sends BEGIN with a transaction's first statement and COMMIT with its last.
      // Statements awaited one by one behave as without it. (Cursors and streams are refused.)
      pipeline: true,
      Client: ListenedPgClient,
    },
  };
}
