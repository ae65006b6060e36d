import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/app-config.js';
import { TEST_API_TOKENS } from './clients.js';

export interface TestApp {
  readonly baseUrl: string;
  readonly app: NestExpressApplication;
  close(): Promise<void>;
}

/**
 * The real application, in this process, listening on a free loopback port, against `databaseUrl`.
 * `env` overrides the environment the way an operator would (IDEMPOTENCY_TTL_SECONDS=…).
 */
export async function startTestApp(databaseUrl: string, env: Record<string, string> = {}): Promise<TestApp> {
  const config = loadConfig({ API_TOKENS: TEST_API_TOKENS, DB_POOL_SIZE: '10', ...env });
  const app = await createApp({ ...config, databaseUrl }, ['error', 'warn']);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { baseUrl: `http://127.0.0.1:${address.port}`, app, close: () => app.close() };
}
