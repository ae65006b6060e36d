import { type DynamicModule, Global, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { dataSourceOptions, type DatabaseSettings } from './data-source-options.js';
import { runMigrationsExclusively } from './migrations.js';
import { NotificationListener } from './notification-listener.js';
import { SESSION_DATABASE_URL } from './session-database-url.js';
import { Transactions } from './transactions.js';

export interface DatabaseModuleOptions extends DatabaseSettings {
  /** Where the connections that keep a session go (LISTEN, the purge's lock): PostgreSQL itself, not a transaction-mode pooler. */
  readonly sessionUrl: string;
  readonly runMigrationsOnStart: boolean;
}

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseModuleOptions): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...dataSourceOptions(options), autoLoadEntities: true }),
          // Migrations run before any provider can use the connection.
          dataSourceFactory: async (typeOrmOptions) => {
            const dataSource = await new DataSource(typeOrmOptions!).initialize();
            if (options.runMigrationsOnStart) logMigrations(await runMigrationsExclusively(dataSource), dataSource.migrations.length);
            else new Logger('Database').log('migrations: not run at start (DB_MIGRATIONS_RUN=false)');
            return dataSource;
          },
        }),
      ],
      providers: [Transactions, NotificationListener, { provide: SESSION_DATABASE_URL, useValue: options.sessionUrl }],
      exports: [Transactions, NotificationListener, SESSION_DATABASE_URL],
    };
  }
}

/** The start-up line: what this start applied, or that there was nothing to apply. */
function logMigrations(applied: readonly string[], known: number): void {
  const line = applied.length > 0 ? `migrations: applied ${applied.length} (the last ${applied.at(-1)})` : `migrations: up to date (${known} applied earlier)`;
  new Logger('Database').log(line);
}
