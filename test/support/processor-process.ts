import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { freePort } from './app-process.js';

const MAIN = path.resolve('dist/processor/main.js');
const READY_LINE = 'local processor listening on';
const START_TIMEOUT_MS = 30_000;
/** Any test-mode key: the local processor accepts every `sk_test_…`. */
export const PROCESSOR_TEST_KEY = 'sk_test_pagos_tests';

export type ProcessorOperation =
  | 'create_intent' | 'confirm_intent' | 'retrieve_intent' | 'cancel_intent' | 'list_intents' | 'create_refund' | 'retrieve_refund' | 'list_refunds';

export interface ProcessorFault {
  readonly operation: ProcessorOperation;
  /** drop_after: the work is done, the answer lost; error_after: done, a 500 kept under the key; error_before: a 500, nothing done; latency: wait first. */
  readonly fault: 'drop_after' | 'error_after' | 'error_before' | 'latency';
  readonly times?: number;
  readonly latencyMs?: number;
}

export interface ProcessorProcess {
  readonly url: string;
  /** What a service process needs to use this processor instead of starting its own. */
  readonly serviceEnv: Record<string, string>;
  child: ChildProcess;
  inject(fault: ProcessorFault): Promise<void>;
  clearFaults(): Promise<void>;
  /** Refuses connections for `ms` (connection refused), then listens again on the same port. */
  refuse(ms: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * The local processor as an OS process of its own (`npm run processor`'s build), its state in
 * `databaseUrl`, with fault injection on: what a test keeps alive while it kills the service.
 */
export async function startProcessorProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ProcessorProcess> {
  // A restarted processor keeps its port, so that the services pointed at it find it again.
  const port = env.PROCESSOR_PORT ? Number(env.PROCESSOR_PORT) : await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, PROCESSOR_PORT: String(port), PROCESSOR_FAULTS: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!output.includes(READY_LINE)) {
    if (child.exitCode !== null) throw new Error(`processor exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`processor did not start within ${START_TIMEOUT_MS} ms:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const url = `http://127.0.0.1:${port}`;
  const control = async (method: string, route: string, body?: unknown): Promise<void> => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`processor ${method} ${route}: ${response.status} ${await response.text()}`);
  };
  return {
    url,
    serviceEnv: { STRIPE_API_URL: url, STRIPE_SECRET_KEY: PROCESSOR_TEST_KEY },
    child,
    inject: (fault) => control('POST', '/_faults', fault),
    clearFaults: () => control('DELETE', '/_faults'),
    refuse: (ms) => control('POST', '/_faults/refuse', { ms }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}
