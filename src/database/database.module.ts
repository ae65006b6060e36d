import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { dataSourceOptions, type DatabaseSettings } from './data-source-options.js';
import { runMigrationsExclusively } from './migrations.js';
import { Transactions } from './transactions.js';

export interface DatabaseModuleOptions extends DatabaseSettings {
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
            if (options.runMigrationsOnStart) await runMigrationsExclusively(dataSource);
            return dataSource;
          },
        }),
      ],
      providers: [Transactions],
      exports: [Transactions],
    };
  }
}
