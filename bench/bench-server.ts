import 'reflect-metadata';
import { countRoundTrips } from './round-trip-counter.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/app-config.js';
import { BenchModule, benchState } from './bench.module.js';
import { startFloorApp } from './floor-app.js';

/**
 * The real service plus the bench routes, and the floor app on the next port, as one process of its own;
 * the counter wraps pg before any connection.
 */
async function main(): Promise<void> {
  benchState.roundTrips = countRoundTrips();
  const config = loadConfig(process.env);
  const app = await createApp({ ...config, databaseUrl: config.databaseUrl! }, [BenchModule]);
  const floor = await startFloorApp(config.databaseUrl!, config.port + 1);
  await app.listen(config.port, '127.0.0.1');
  console.log(`bench server listening on port ${config.port} (floor on ${config.port + 1})`);
  process.once('SIGTERM', () => void Promise.all([app.close(), floor.close()]).then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
