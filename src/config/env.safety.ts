import { ConfigError } from './config.error.js';
import type { EnvSchema } from './env.schema.js';

// A demo client so that `npm start` answers curl with no setup; real deployments set API_TOKENS.
export const DEMO_API_TOKENS = 'demo:demo-token-change-me-0001';
const DEMO_TOKEN = DEMO_API_TOKENS.split(':')[1]!;

/**
 * What `NODE_ENV=production` refuses, each with one line naming the variable: the development
 * conveniences (the README's demo token, the embedded PostgreSQL with its `postgres`/`postgres`
 * superuser, webhooks to internal addresses, the local processor) must never serve real clients.
 * Outside production only the processor's settings must agree.
 */
export function assertSafeEnvironment(env: EnvSchema): void {
  if (env.NODE_ENV === 'production') assertProductionSafe(env);
  assertProcessorSafe(env);
}

function assertProductionSafe(env: EnvSchema): void {
  if (!env.API_TOKENS) {
    throw new ConfigError('API_TOKENS is required with NODE_ENV=production: without it the README\'s demo token would be accepted');
  }
  if (env.API_TOKENS.split(',').some((pair) => pair.split(':')[1] === DEMO_TOKEN)) {
    throw new ConfigError('API_TOKENS must not contain the demo token with NODE_ENV=production: it is published in the README');
  }
  if (!env.DATABASE_URL) {
    throw new ConfigError('DATABASE_URL is required with NODE_ENV=production: the embedded PostgreSQL (superuser postgres/postgres) is for development only');
  }
  if (env.WEBHOOKS_ALLOW_INSECURE_URLS === 'true') {
    throw new ConfigError('WEBHOOKS_ALLOW_INSECURE_URLS=true is refused with NODE_ENV=production: webhooks could reach internal addresses over http');
  }
}

function assertProcessorSafe(env: EnvSchema): void {
  if (env.STRIPE_SECRET_KEY) {
    if (env.NODE_ENV === 'production' && !env.STRIPE_WEBHOOK_SECRET) {
      throw new ConfigError('STRIPE_WEBHOOK_SECRET is required with NODE_ENV=production and STRIPE_SECRET_KEY: without webhooks, outcomes wait for the reconciler');
    }
    return;
  }
  if (env.NODE_ENV === 'production') {
    throw new ConfigError('STRIPE_SECRET_KEY is required with NODE_ENV=production: the local processor moves no real money');
  }
  if (env.STRIPE_API_URL) throw new ConfigError('STRIPE_API_URL needs STRIPE_SECRET_KEY (without both, the local processor is started)');
}
