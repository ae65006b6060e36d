import { freePort } from './app-process.js';
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
}

/**
 * The local processor as an OS process of its own, its state in `databaseUrl`, with fault injection
 * on, for a service to use: what a test keeps alive while it kills the service. A restarted
 * processor is given its predecessor's `PROCESSOR_PORT`, so the services pointed at it find it again.
 */
export async function startProcessorProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ProcessorProcess> {
  const port = env.PROCESSOR_PORT ?? String(await freePort());
  const processor = await startStandalone(databaseUrl, { PROCESSOR_FAULTS: 'true', ...env, PROCESSOR_PORT: port });
  const { url } = processor;
  return Object.assign(processor, {
    serviceEnv: { STRIPE_API_URL: url, STRIPE_SECRET_KEY: PROCESSOR_TEST_KEY },
    inject: (fault: FaultSpec) => addFault(url, fault),
    clearFaults: () => clearFaults(url),
    refuse: async (ms: number) => {
      const response = await fetch(`${url}/_faults/refuse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ms }) });
      if (!response.ok) throw new Error(`refusing connections answered ${response.status}: ${await response.text()}`);
    },
  });
}
