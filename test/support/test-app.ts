import { type AppProcess, startAppProcess } from './app-process.js';

export interface TestApp {
  readonly baseUrl: string;
  /** Everything the service printed so far. */
  output(): string;
  close(): Promise<void>;
}

/**
 * The real, built application as its own process on a free loopback port, against `databaseUrl`.
 * `env` overrides the environment the way an operator would (IDEMPOTENCY_TTL_SECONDS=…).
 *
 * Not in Jest's process: Jest's ES-module runtime can't load CommonJS libraries that `require` the
 * ESM-only Nest 12 packages (@nestjs/throttler, nestjs-pino), which Node itself loads fine.
 */
export async function startTestApp(databaseUrl: string, env: Record<string, string> = {}): Promise<TestApp> {
  const service: AppProcess = await startAppProcess(databaseUrl, { DB_POOL_SIZE: '10', ...env });
  return {
    baseUrl: service.baseUrl,
    output: () => service.output(),
    close: async () => {
      await service.stop();
    },
  };
}
