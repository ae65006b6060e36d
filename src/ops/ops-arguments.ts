import type { AppConfig } from '../config/app-config.js';
import type { OpsContext } from './ops-context.js';

// What a command checks before anything opens. This file and what it imports load in milliseconds;
// Nest, TypeORM and the modules (ops-context.ts, over a second) load only once the arguments are good.

/** Thrown for anything the operator must fix or decide; its message is the one line printed. */
export class OpsError extends Error {
  override readonly name = 'OpsError';
}

/** An error whose message is the whole answer: the operator's (OpsError) or the environment's (ConfigError, known by name so as not to load it). */
export function isOperatorError(error: unknown): error is Error {
  return error instanceof OpsError || (error instanceof Error && error.name === 'ConfigError');
}

/** The service's configuration, as the service reads it (the environment and `.env`); opens nothing. */
export async function opsConfig(): Promise<AppConfig> {
  const { loadConfig, readEnvironment } = await import('../config/app-config.js');
  return loadConfig(readEnvironment());
}

/** The client id as API_TOKENS names it; an unknown one is an operator's typo, not an empty result. */
export function knownClient(config: AppConfig, clientId: string): string {
  const ids = config.apiClients.map((client) => client.clientId);
  if (!ids.includes(clientId)) throw new OpsError(`unknown client "${clientId}": API_TOKENS names ${ids.map((id) => `"${id}"`).join(', ')}`);
  return clientId;
}

/** Runs `work` on the service's modules and database (see ops-context.ts), loaded only now. */
export async function withOps<T>(config: AppConfig, work: (context: OpsContext) => Promise<T>): Promise<T> {
  const { withOpsContext } = await import('./ops-context.js');
  return withOpsContext(config, work);
}
