import 'reflect-metadata';
import { countRoundTrips } from './round-trip-counter.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/app-config.js';
import { StripePaymentGateway } from '../src/gateway/stripe-payment-gateway.js';
import { BenchModule, benchState } from './bench.module.js';
import { startFloorApp } from './floor-app.js';

/**
 * The real service plus the bench routes, and the floor app on the next port, as one process of its own;
 * the counter wraps pg before any connection. The processor is another process (bench/run.ts starts
 * it and names it in STRIPE_API_URL and STRIPE_SECRET_KEY), so that none of its CPU is counted here.
 */
async function main(): Promise<void> {
  benchState.roundTrips = countRoundTrips();
  const config = loadConfig(process.env);
  const { secretKey } = config.processor;
  if (!secretKey) throw new Error('bench server: STRIPE_SECRET_KEY and STRIPE_API_URL must name the processor (bench/run.ts starts it)');
  const processor = { ...config.processor, secretKey };
  const app = await createApp({ ...config, databaseUrl: config.databaseUrl!, processor }, [BenchModule]);
  // The floor's own adapter, configured as GatewayModule configures the service's.
  const gateway = new StripePaymentGateway({ ...processor, apiUrl: new URL(processor.apiUrl) });
  const floor = await startFloorApp(config.databaseUrl!, gateway, config.apiClients, config.port + 1);
  benchState.requests.watch(app.getHttpServer());
  benchState.requests.watch(floor.getHttpServer());
  await app.listen(config.port, '127.0.0.1');
  console.log(`bench server listening on port ${config.port} (floor on ${config.port + 1})`);
  process.once('SIGTERM', () => void Promise.all([app.close(), floor.close()]).then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
