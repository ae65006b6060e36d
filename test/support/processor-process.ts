import { freePort } from './free-port.js';
import { addFault, clearFaults, type FaultSpec, type ProcessorProcess as StandaloneProcessor, startProcessorProcess as startStandalone } from './local-processor.js';

/** Any test-mode key: the local processor accepts every `sk_test_…`. */
export const PROCESSOR_TEST_KEY = 'sk_test_pagos_tests';

export interface ProcessorProcess extends StandaloneProcessor {
  /** What a service process needs to use this processor instead of starting its own. */
  readonly serviceEnv: Record<string, string>;
  inject(fault: FaultSpec): Promise<void>;
  clearFaults(): Promise<void>;
  /** Refuses connections for `ms` (connection refused), then listens again on the same port. */
  refuse(ms: number): Promise<void>;
  /** Where it sends its signed webhooks from now on (events written before wait for it). */
  pointWebhooksAt(url: string, secret: string): Promise<void>;
  injectWebhook(fault: WebhookFaultSpec): Promise<void>;
  /** The API faults not yet taken by an execution: empty once the one injected has begun. */
  pendingFaults(): Promise<unknown[]>;
}

export interface WebhookFaultSpec {
  fault: 'drop' | 'duplicate' | 'reorder' | 'delay';
  type?: string;
  delayMs?: number;
  times?: number;
}

/**
 * The local processor as an OS process of its own, its state in `databaseUrl`, with fault injection
 * on, for a service to use: what a test keeps alive while it kills the service. A restarted
 * processor is given its predecessor's `PROCESSOR_PORT`, so the services pointed at it find it again.
 */
async function postFault(processorUrl: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${processorUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`);
}

export async function startProcessorProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ProcessorProcess> {
  const port = env.PROCESSOR_PORT ?? String(await freePort());
  const processor = await startStandalone(databaseUrl, { PROCESSOR_FAULTS: 'true', ...env, PROCESSOR_PORT: port });
  const { url } = processor;
  return Object.assign(processor, {
    serviceEnv: { STRIPE_API_URL: url, STRIPE_SECRET_KEY: PROCESSOR_TEST_KEY },
    inject: (fault: FaultSpec) => addFault(url, fault),
    clearFaults: () => clearFaults(url),
    refuse: (ms: number) => postFault(url, '/_faults/refuse', { ms }),
    pointWebhooksAt: (webhookUrl: string, secret: string) => postFault(url, '/_faults/webhook-endpoint', { url: webhookUrl, secret }),
    injectWebhook: (fault: WebhookFaultSpec) => postFault(url, '/_faults/webhooks', fault),
    pendingFaults: async () => ((await (await fetch(`${url}/_faults`)).json()) as { pending: unknown[] }).pending,
  });
}
