import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { processStat } from './process-cpu.js';

const MAIN = path.resolve('dist-bench/processor/main.js');
const READY_LINE = /local processor listening on (\S+)/;
/** Its connections carry this name, so that its backends' CPU can be told apart from the service's. */
export const PROCESSOR_APPLICATION_NAME = 'bench-processor';

export interface BenchProcessor {
  readonly url: string;
  /** The local processor accepts any test-mode key. */
  readonly secretKey: string;
  /** CPU time (µs) its process has used so far; undefined off Linux. */
  cpuMicros(): number | undefined;
  stop(): Promise<void>;
}

/**
 * The local processor (`npm run bench`'s build of processor/main.ts) as an OS process of its own on
 * a free port, its state in `databaseUrl`: the service reaches it over loopback HTTP, as it would
 * reach Stripe, and its CPU is read apart from the service's.
 */
export async function startBenchProcessor(databaseUrl: string): Promise<BenchProcessor> {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', PROCESSOR_APPLICATION_NAME);
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, DATABASE_URL: url.toString(), PROCESSOR_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const listening = await listeningUrl(child);
  return {
    url: listening,
    secretKey: 'sk_test_pagos_bench',
    cpuMicros: () => processStat(child.pid!)?.cpuMicros,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = READY_LINE.exec(output);
      if (ready) resolve(ready[1]!);
    });
    child.once('exit', (code) => reject(new Error(`processor exited with ${code}`)));
  });
}
