import { Logger } from '@nestjs/common';
import pg from 'pg';

const logger = new Logger('Database');

/**
 * A node-postgres client that listens for `error` from the moment it exists. pg-pool stops
 * listening when it hands a new client out and TypeORM starts a microtask later; a server that
 * terminates the connection in between (failover, pg_terminate_backend) would otherwise raise an
 * unhandled `error` event and kill the process. The query in progress still fails, and the pool
 * discards the client.
 */
export class ListenedPgClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', (error) => logger.warn(`connection lost: ${error.message}`));
  }
}
