import { startLocalProcessor } from './local-processor.js';

/**
 * The local processor as its own process (`npm run processor`), so fault tests can kill the
 * service while the processor lives. Prints exactly one line to stdout once listening; everything
 * else goes to stderr.
 *
 * Env: DATABASE_URL (required), PROCESSOR_HOST (127.0.0.1), PROCESSOR_PORT (12111, stripe-mock's
 * port, so tools that expect stripe-mock find it; 0 = ephemeral), GATEWAY_LATENCY_MS (0),
 * PROCESSOR_FAULTS=true (enables the /_faults API).
 */
const DEFAULT_PORT = 12111;

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) fail('DATABASE_URL is required (e.g. postgres://postgres@127.0.0.1:5432/pagos)');
  const processor = await startLocalProcessor({
    databaseUrl,
    host: process.env.PROCESSOR_HOST || '127.0.0.1',
    port: integerFromEnv('PROCESSOR_PORT', DEFAULT_PORT, 65_535),
    latencyMs: integerFromEnv('GATEWAY_LATENCY_MS', 0, 600_000),
    faultInjection: process.env.PROCESSOR_FAULTS === 'true',
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`local processor listening on ${processor.url}\n`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      processor.close().then(
        () => process.exit(0),
        (error: Error) => fail(`could not close cleanly: ${error.message}`),
      );
    });
  }
}

function integerFromEnv(name: string, fallback: number, maximum: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value > maximum) fail(`${name} must be an integer from 0 to ${maximum}, got '${text}'`);
  return value;
}

function fail(message: string): never {
  process.stderr.write(`local processor: ${message}\n`);
  process.exit(1);
}

main().catch((error: Error) => fail(`could not start: ${error.message}`));
