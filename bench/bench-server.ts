import 'reflect-metadata';
import { countRoundTrips } from './round-trip-counter.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/app-config.js';
import { BenchModule, benchState } from './bench.module.js';

/** The real service plus the bench routes, as its own process; the counter wraps pg before any connection. */
async function main(): Promise<void> {
  benchState.roundTrips = countRoundTrips();
  const config = loadConfig(process.env);
  const app = await createApp({ ...config, databaseUrl: config.databaseUrl! }, [BenchModule]);
  await app.listen(config.port, '127.0.0.1');
  console.log(`bench server listening on port ${config.port}`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
