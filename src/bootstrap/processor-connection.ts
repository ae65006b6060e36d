import type { AppConfig } from '../config/app-config.js';
import { startLocalProcessor } from '../../processor/local-processor.js';

/** The key the service sends the local processor, which accepts any test-mode key. */
const LOCAL_PROCESSOR_KEY = 'sk_test_local_processor';

export interface ProcessorConnection {
  /** `config.processor` with a URL and key to reach it. */
  readonly processor: AppConfig['processor'] & { readonly secretKey: string };
  /** Where payments go, for the start-up line: Stripe's API URL, or the local processor's. */
  readonly description: string;
  readonly local: boolean;
  stop(): Promise<void>;
}

/**
 * The processor the configuration names, or — with no STRIPE_SECRET_KEY — a local Stripe-compatible
 * processor started in this process, its state in `databaseUrl` (schema `procesador_local`), so that
 * it survives a restart and the replicas on one database share one processor. The service reaches
 * either over HTTP through the same adapter; this entry-point helper is the only code that knows
 * the local one is not remote.
 */
export async function connectProcessor(config: AppConfig, databaseUrl: string): Promise<ProcessorConnection> {
  const { secretKey } = config.processor;
  if (secretKey) {
    const mode = secretKey.includes('_live_') ? 'live' : 'test';
    return { processor: { ...config.processor, secretKey }, description: `Stripe at ${new URL(config.processor.apiUrl).origin} (${mode} mode)`, local: false, stop: async () => undefined };
  }
  // The LISTEN URL reaches PostgreSQL itself even behind a pooler: the processor's session lock needs that.
  const local = await startLocalProcessor({ databaseUrl, sessionDatabaseUrl: config.databaseListenUrl, latencyMs: config.gatewayLatencyMs });
  return {
    processor: { ...config.processor, secretKey: LOCAL_PROCESSOR_KEY, apiUrl: local.url },
    description: `the local processor, in this process, at ${local.url}`,
    local: true,
    stop: () => local.close(),
  };
}
