import { startLocalProcessor, type WebhookOptions } from './local-processor.js';
import { secretProblem, urlProblem } from './webhook-endpoint.js';

/**
 * The local processor as its own process (`npm run processor`), so fault tests can kill the
 * service while the processor lives. Prints exactly one line to stdout once listening; everything
 * else goes to stderr.
 *
 * Env: DATABASE_URL (required), PROCESSOR_HOST (127.0.0.1), PROCESSOR_PORT (12111, stripe-mock's
 * port, so tools that expect stripe-mock find it; 0 = ephemeral), GATEWAY_LATENCY_MS (0),
 * PROCESSOR_FAULTS=true (enables the /_faults API). Webhooks: STRIPE_WEBHOOK_URL (where to send
 * events), STRIPE_WEBHOOK_SECRET (`whsec_…`, required with the URL), PROCESSOR_WEBHOOK_RETRY_BASE_MS
 * (1000) and PROCESSOR_WEBHOOK_RETRY_MAX_MS (60000).
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
    webhook: webhookFromEnv(),
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

function webhookFromEnv(): WebhookOptions {
  const url = process.env.STRIPE_WEBHOOK_URL || undefined;
  const secret = process.env.STRIPE_WEBHOOK_SECRET || undefined;
  if (url !== undefined && secret === undefined) fail('STRIPE_WEBHOOK_SECRET is required with STRIPE_WEBHOOK_URL (the endpoint\'s whsec_… signing secret)');
  if (url !== undefined && urlProblem(url)) fail(`STRIPE_WEBHOOK_URL must be an http(s) URL, got '${url}'`);
  if (secret !== undefined && secretProblem(secret)) fail('STRIPE_WEBHOOK_SECRET must start with whsec_');
  return {
    url,
    secret,
    retryBaseMs: integerFromEnv('PROCESSOR_WEBHOOK_RETRY_BASE_MS', 1_000, 3_600_000, 1),
    retryMaxMs: integerFromEnv('PROCESSOR_WEBHOOK_RETRY_MAX_MS', 60_000, 86_400_000, 1),
  };
}

function integerFromEnv(name: string, fallback: number, maximum: number, minimum = 0): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < minimum || value > maximum) fail(`${name} must be an integer from ${minimum} to ${maximum}, got '${text}'`);
  return value;
}

function fail(message: string): never {
  process.stderr.write(`local processor: ${message}\n`);
  process.exit(1);
}

main().catch((error: Error) => fail(`could not start: ${error.message}`));
