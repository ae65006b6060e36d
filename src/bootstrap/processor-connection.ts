import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../config/app-config.js';
import { type LocalProcessor, startLocalProcessor } from '../../processor/local-processor.js';

/** The key the service sends the local processor, which accepts any test-mode key. */
const LOCAL_PROCESSOR_KEY = 'sk_test_local_processor';
/** Where the service takes the processor's webhooks (ProcessorWebhooksController). */
const WEBHOOKS_PATH = '/stripe/webhooks';

export interface ProcessorConnection {
  /** `config.processor` with a URL, key and webhook secret to reach it and hear from it. */
  readonly processor: AppConfig['processor'] & { readonly secretKey: string };
  /** Where payments go, for the start-up line: Stripe's API URL, or the local processor's. */
  readonly description: string;
  readonly local: boolean;
  /** Once the service listens: the local processor starts sending its webhooks there. */
  listening(port: number): void;
  stop(): Promise<void>;
}

/**
 * The processor the configuration names, or — with no STRIPE_SECRET_KEY — a local Stripe-compatible
 * processor started in this process, its state in `databaseUrl` (schema `procesador_local`), so that
 * it survives a restart and the replicas on one database share one processor. It signs its webhooks
 * with STRIPE_WEBHOOK_SECRET, or a secret made up for this run, and sends them to this service once
 * it listens. The service reaches either over HTTP through the same adapter; this entry-point helper
 * is the only code that knows the local one is not remote.
 */
export async function connectProcessor(config: AppConfig, databaseUrl: string): Promise<ProcessorConnection> {
  const { secretKey } = config.processor;
  if (secretKey) {
    const mode = secretKey.includes('_live_') ? 'live' : 'test';
    return {
      processor: { ...config.processor, secretKey },
      description: `Stripe at ${new URL(config.processor.apiUrl).origin} (${mode} mode)`,
      local: false,
      listening: () => undefined,
      stop: async () => undefined,
    };
  }
  const webhookSecret = config.processor.webhookSecret ?? `whsec_${randomBytes(24).toString('base64')}`;
  const local = await startLocalProcessorOn(config, databaseUrl, webhookSecret);
  return {
    processor: { ...config.processor, secretKey: LOCAL_PROCESSOR_KEY, apiUrl: local.url, webhookSecret },
    description: `the local processor, in this process, at ${local.url}`,
    local: true,
    listening: (port) => {
      if (config.localProcessorWebhooks) local.setWebhookUrl(`http://127.0.0.1:${port}${WEBHOOKS_PATH}`);
    },
    stop: () => local.close(),
  };
}

/**
 * On LOCAL_PROCESSOR_PORT, or any free port when another process (a second `npm start`, a
 * standalone processor) has it: a development stand-in is not worth a failed start. The start log
 * says where it is.
 */
async function startLocalProcessorOn(config: AppConfig, databaseUrl: string, webhookSecret: string): Promise<LocalProcessor> {
  // The LISTEN URL reaches PostgreSQL itself even behind a pooler: the processor's session lock needs that.
  const options = { databaseUrl, sessionDatabaseUrl: config.databaseListenUrl, latencyMs: config.gatewayLatencyMs, webhook: { secret: webhookSecret } };
  try {
    return await startLocalProcessor({ ...options, port: config.localProcessorPort });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startLocalProcessor({ ...options, port: 0 });
  }
}
