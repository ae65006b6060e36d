// class-transformer's @Type reads decorator metadata; main.ts loads this polyfill for the app.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { getMetadataStorage } from 'class-validator';
import { CONFIG_DEFAULTS, ConfigError, DEMO_API_TOKENS, loadConfig } from '../../src/config/app-config.js';
import { EnvSchema } from '../../src/config/env.schema.js';

/** Pure validation of an environment object; `process.env` is never read or written here. */
const TOKEN_A = 'tok-alice-0123456789abcdef';
const TOKEN_B = 'tok-bob-0123456789abcdef';
const CONFIG_WAITING_DEFAULTS = {
  defaultSeconds: CONFIG_DEFAULTS.defaultWaitSeconds, maxSeconds: CONFIG_DEFAULTS.maxWaitSeconds, maxWaiters: CONFIG_DEFAULTS.maxWaiters,
};

// Everything production needs but the processor's settings, then with them.
const PRODUCTION_BASE = { NODE_ENV: 'production', API_TOKENS: `alice:${TOKEN_A}`, DATABASE_URL: 'postgres://pagos@db.internal:5432/pagos' };
const PRODUCTION = { ...PRODUCTION_BASE, STRIPE_SECRET_KEY: 'sk_live_abcdefgh12345678', STRIPE_WEBHOOK_SECRET: 'whsec_abcdefgh12345678' };

/** The ConfigError `loadConfig(env)` throws; fails the test if it throws nothing or something else. */
function configErrorFor(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError for ${Object.keys(env).join(', ')}`);
}

/** The start-up rule: one line, naming the variable. */
function expectOneLineNaming(error: ConfigError, variable: string): void {
  expect(error.name).toBe('ConfigError');
  expect(error.message).not.toMatch(/[\r\n]/);
  expect(error.message).toContain(variable);
}

describe('loadConfig: defaults', () => {
  it('an empty environment yields the documented defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.runMigrationsOnStart).toBe(true);
    expect(config.idempotency).toEqual({
      ttlSeconds: 86400, lockTimeoutSeconds: 60, purgeCron: '0 */10 * * * *',
      waiting: { defaultSeconds: 0, maxSeconds: 10, maxWaiters: 1000 },
      replayCache: { entries: 10_000, seconds: 60 },
    });
    expect(config.databaseListenUrl).toBeUndefined();
    expect(config.dbPoolSize).toBe(CONFIG_DEFAULTS.dbPoolSize);
    expect(config.gatewayLatencyMs).toBe(0);
    expect(config.localProcessorPort).toBe(12111);
    expect(config.localProcessorWebhooks).toBe(true);
    expect(loadConfig({ LOCAL_PROCESSOR_WEBHOOKS: 'false' }).localProcessorWebhooks).toBe(false);
    expect(config.pagos).toEqual({ reconcileCron: '*/30 * * * * *', autenticacionTimeoutSeconds: 900 });
    expect(config.rateLimit).toEqual({ requests: 300, windowSeconds: 60, redisUrl: undefined, redisKeyPrefix: 'pagos:rate-limit:' });
    expect(config.log).toEqual({ level: 'info', format: 'auto' });
  });

  it('PAGOS_RECONCILE_CRON comes through as given', () => {
    expect(loadConfig({ PAGOS_RECONCILE_CRON: '*/5 * * * * *' }).pagos.reconcileCron).toBe('*/5 * * * * *');
  });

  it('rate limit and log settings come through typed', () => {
    const config = loadConfig({ RATE_LIMIT_REQUESTS: '5', RATE_LIMIT_WINDOW_SECONDS: '10', LOG_LEVEL: 'debug', LOG_FORMAT: 'json' });
    expect(config.rateLimit).toMatchObject({ requests: 5, windowSeconds: 10 });
    expect(config.log).toEqual({ level: 'debug', format: 'json' });
  });

  it('the rate limit has no upper bound (its stores count, whatever the limit) and can live in Redis', () => {
    const config = loadConfig({ RATE_LIMIT_REQUESTS: '1000000', REDIS_URL: 'redis://:pw@cache.internal:6379/2', RATE_LIMIT_REDIS_PREFIX: 'shop-a:rl:' });
    expect(config.rateLimit).toEqual({ requests: 1_000_000, windowSeconds: 60, redisUrl: 'redis://:pw@cache.internal:6379/2', redisKeyPrefix: 'shop-a:rl:' });
    expect(loadConfig({ REDIS_URL: 'rediss://cache.internal' }).rateLimit.redisUrl).toBe('rediss://cache.internal');
  });

  it('with API_TOKENS unset the demo client is configured', () => {
    const [clientId, token] = DEMO_API_TOKENS.split(':');
    expect(loadConfig({}).apiClients).toEqual([{ clientId, token }]);
  });

  it('an empty-string value is treated as unset, so the default applies', () => {
    const names = ['PORT', 'DATABASE_URL', 'DB_MIGRATIONS_RUN', 'API_TOKENS', 'IDEMPOTENCY_TTL_SECONDS', 'IDEMPOTENCY_LOCK_TIMEOUT_SECONDS', 'IDEMPOTENCY_PURGE_CRON', 'PAGOS_RECONCILE_CRON'];
    expect(loadConfig(Object.fromEntries(names.map((name) => [name, ''])))).toEqual(loadConfig({}));
  });

  it('variables the service does not know are ignored', () => {
    expect(loadConfig({ PATH: '/usr/bin', HOME: '/root' })).toEqual(loadConfig({}));
  });
});

describe('loadConfig: valid values are read', () => {
  it('numbers, the URL, the cron and the clients come through typed', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://app@db.internal:5432/pagos',
      IDEMPOTENCY_TTL_SECONDS: '3600',
      IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: '30',
      IDEMPOTENCY_PURGE_CRON: '*/5 * * * *',
      IDEMPOTENCY_REPLAY_CACHE_ENTRIES: '500',
      IDEMPOTENCY_REPLAY_CACHE_SECONDS: '5',
      API_TOKENS: `alice:${TOKEN_A},bob:${TOKEN_B}`,
    });
    expect(config.port).toBe(8080);
    expect(config.databaseUrl).toBe('postgres://app@db.internal:5432/pagos');
    expect(config.idempotency).toEqual({
      ttlSeconds: 3600, lockTimeoutSeconds: 30, purgeCron: '*/5 * * * *', waiting: CONFIG_WAITING_DEFAULTS, replayCache: { entries: 500, seconds: 5 },
    });
    expect(config.apiClients).toEqual([
      { clientId: 'alice', token: TOKEN_A },
      { clientId: 'bob', token: TOKEN_B },
    ]);
  });

  it('a postgresql:// URL is accepted as well as postgres://', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://u:p@127.0.0.1/pagos' }).databaseUrl).toBe('postgresql://u:p@127.0.0.1/pagos');
  });

  it('DB_MIGRATIONS_RUN=false turns migrations at start-up off; true keeps them on', () => {
    expect(loadConfig({ DB_MIGRATIONS_RUN: 'false' }).runMigrationsOnStart).toBe(false);
    expect(loadConfig({ DB_MIGRATIONS_RUN: 'true' }).runMigrationsOnStart).toBe(true);
  });

  it('a TTL one second longer than the lock timeout is accepted', () => {
    expect(loadConfig({ IDEMPOTENCY_TTL_SECONDS: '61', IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: '60' }).idempotency.ttlSeconds).toBe(61);
  });
});

describe('loadConfig: a bad value throws a one-line ConfigError naming the variable', () => {
  it.each([
    ['DATABASE_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['DATABASE_URL', 'postgres:///pagos'],
    ['IDEMPOTENCY_TTL_SECONDS', '-1'],
    ['IDEMPOTENCY_TTL_SECONDS', '3600.5'],
    ['IDEMPOTENCY_LOCK_TIMEOUT_SECONDS', '0'],
    ['PORT', 'abc'],
    ['PORT', '3000.5'],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['IDEMPOTENCY_PURGE_CRON', 'every 10 minutes'],
    ['IDEMPOTENCY_PURGE_CRON', '61 * * * * *'],
    ['IDEMPOTENCY_PURGE_CRON', '* * *'],
    ['PAGOS_RECONCILE_CRON', 'every 30 seconds'],
    ['PAGOS_RECONCILE_CRON', '*/30 * * * * * *'],
    ['DB_MIGRATIONS_RUN', 'no'],
    ['API_TOKENS', 'alice'],
    ['API_TOKENS', 'alice:short'],
    ['API_TOKENS', `alice:${TOKEN_A},`],
    ['API_TOKENS', `alice:${TOKEN_A};bob:${TOKEN_B}`],
    ['API_TOKENS', `al ice:${TOKEN_A}`],
    ['RATE_LIMIT_REQUESTS', '0'],
    ['RATE_LIMIT_REQUESTS', '1.5'],
    ['RATE_LIMIT_REDIS_PREFIX', 'has space'],
    ['RATE_LIMIT_REDIS_PREFIX', 'x'.repeat(65)],
    ['RATE_LIMIT_REQUESTS', 'many'],
    ['RATE_LIMIT_WINDOW_SECONDS', '3601'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_FORMAT', 'xml'],
  ])('%s=%j is rejected', (variable, value) => {
    const error = configErrorFor({ [variable]: value });
    expectOneLineNaming(error, variable);
    expect(error.message).toMatch(new RegExp(`^Invalid configuration: ${variable}=`));
  });

  it('a value with a newline still yields a one-line message', () => {
    expectOneLineNaming(configErrorFor({ IDEMPOTENCY_PURGE_CRON: '0 */10 * * * *\nrm -rf /' }), 'IDEMPOTENCY_PURGE_CRON');
  });

  it('a duplicate client id in API_TOKENS is rejected, naming the client', () => {
    const error = configErrorFor({ API_TOKENS: `alice:${TOKEN_A},alice:${TOKEN_B}` });
    expectOneLineNaming(error, 'API_TOKENS');
    expect(error.message).toContain('"alice"');
  });

  it('two clients sharing one token are rejected, since the token could not tell them apart', () => {
    const error = configErrorFor({ API_TOKENS: `alice:${TOKEN_A},bob:${TOKEN_A}` });
    expectOneLineNaming(error, 'API_TOKENS');
    expect(error.message).not.toContain(TOKEN_A);
  });

  it.each([
    ['equal to', '60', '60'],
    ['shorter than', '60', '120'],
  ])('a TTL %s the lock timeout is rejected, naming both variables', (_name, ttl, lock) => {
    const error = configErrorFor({ IDEMPOTENCY_TTL_SECONDS: ttl, IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: lock });
    expectOneLineNaming(error, 'IDEMPOTENCY_TTL_SECONDS');
    expect(error.message).toContain('IDEMPOTENCY_LOCK_TIMEOUT_SECONDS');
  });

  it('WEBHOOKS_MAX_PER_CLIENT is 20 by default, read when given, and 1 … 1000', () => {
    expect(loadConfig({}).webhooks.maxPerClient).toBe(20);
    expect(loadConfig({ WEBHOOKS_MAX_PER_CLIENT: '3' }).webhooks.maxPerClient).toBe(3);
    for (const value of ['0', '1001', 'many']) expectOneLineNaming(configErrorFor({ WEBHOOKS_MAX_PER_CLIENT: value }), 'WEBHOOKS_MAX_PER_CLIENT');
  });

  it('a non-secret value is quoted as given, so the operator sees what was wrong', () => {
    expect(configErrorFor({ IDEMPOTENCY_PURGE_CRON: 'every 10 minutes' }).message).toContain('"every 10 minutes"');
    expect(configErrorFor({ PORT: '3000.5' }).message).toContain('PORT="3000.5"');
  });
});

describe('loadConfig: secrets never appear in an error message', () => {
  it.each([
    ['a token too short', 'alice:s3cr3t-short'],
    ['a pair without a colon', 's3cr3t-short-but-long-enough-0001'],
    ['a token with a space', 'alice:s3cr3t short-but-long-enough'],
  ])('malformed API_TOKENS (%s) are reported as (hidden)', (_name, value) => {
    const error = configErrorFor({ API_TOKENS: value });
    expect(error.message).toContain('API_TOKENS=(hidden)');
    expect(error.message).not.toContain('s3cr3t');
  });

  it.each([
    ['an unsupported scheme', 'mysql://app:hunter2-pw@db.internal/pagos'],
    ['no host', 'postgres://app:hunter2-pw@/pagos'],
    ['not a URL', 'app:hunter2-pw db.internal'],
  ])('a bad DATABASE_URL (%s) is reported as (hidden)', (_name, value) => {
    const error = configErrorFor({ DATABASE_URL: value });
    expect(error.message).toContain('DATABASE_URL=(hidden)');
    expect(error.message).not.toContain('hunter2');
  });

  it.each([
    ['an unsupported scheme', 'http://:hunter2-pw@cache.internal:6379'],
    ['no host', 'redis://:hunter2-pw@'],
  ])('a bad REDIS_URL (%s) is reported as (hidden)', (_name, value) => {
    const error = configErrorFor({ REDIS_URL: value });
    expect(error.message).toContain('REDIS_URL=(hidden)');
    expect(error.message).not.toContain('hunter2');
  });

  it('a duplicate client in API_TOKENS names the client but no token', () => {
    const message = configErrorFor({ API_TOKENS: `alice:${TOKEN_A},alice:${TOKEN_B}` }).message;
    expect(message).not.toContain(TOKEN_A);
    expect(message).not.toContain(TOKEN_B);
  });

  it('an error in another variable does not echo valid secrets next to it', () => {
    const message = configErrorFor({
      DATABASE_URL: 'postgres://app:hunter2-pw@db.internal/pagos',
      API_TOKENS: `alice:${TOKEN_A}`,
      IDEMPOTENCY_TTL_SECONDS: '60',
    }).message;
    expect(message).toContain('IDEMPOTENCY_TTL_SECONDS');
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain(TOKEN_A);
  });
});

describe('loadConfig: the payment processor', () => {
  it('no key: the local processor (the entry point starts it), with the SDK defaults', () => {
    expect(loadConfig({}).processor).toEqual({ secretKey: undefined, apiUrl: 'https://api.stripe.com', timeoutMs: 10_000, maxNetworkRetries: 2, webhookSecret: undefined });
  });

  it('a key, a Stripe-compatible URL, a timeout and retries come through typed', () => {
    const config = loadConfig({ STRIPE_SECRET_KEY: 'sk_test_abcdefgh12345678', STRIPE_API_URL: 'http://127.0.0.1:12111', STRIPE_TIMEOUT_MS: '2500', STRIPE_MAX_NETWORK_RETRIES: '0' });
    expect(config.processor).toEqual({ secretKey: 'sk_test_abcdefgh12345678', apiUrl: 'http://127.0.0.1:12111', timeoutMs: 2500, maxNetworkRetries: 0, webhookSecret: undefined });
  });

  it('NODE_ENV=production without a key refuses to start: the local processor moves no real money', () => {
    expectOneLineNaming(configErrorFor({ ...PRODUCTION_BASE }), 'STRIPE_SECRET_KEY');
    expect(loadConfig(PRODUCTION).processor).toMatchObject({ secretKey: 'sk_live_abcdefgh12345678', webhookSecret: 'whsec_abcdefgh12345678' });
  });

  it('NODE_ENV=production with a key but no webhook secret refuses to start: outcomes after the answer would wait for the reconciler', () => {
    expectOneLineNaming(configErrorFor({ ...PRODUCTION_BASE, STRIPE_SECRET_KEY: 'sk_live_abcdefgh12345678' }), 'STRIPE_WEBHOOK_SECRET');
    expect(loadConfig({ STRIPE_SECRET_KEY: 'sk_test_abcdefgh12345678' }).processor.webhookSecret).toBeUndefined();
  });

  it('STRIPE_API_URL without a key is refused rather than silently replaced by the local processor', () => {
    expectOneLineNaming(configErrorFor({ STRIPE_API_URL: 'http://127.0.0.1:12111' }), 'STRIPE_API_URL');
  });

  it.each([
    ['STRIPE_SECRET_KEY', 'pk_test_abcdefgh12345678'],
    ['STRIPE_API_URL', 'ftp://api.stripe.com'],
    ['STRIPE_TIMEOUT_MS', '50'],
    ['STRIPE_MAX_NETWORK_RETRIES', '9'],
    ['STRIPE_WEBHOOK_SECRET', 'not-a-secret'],
    ['AUTENTICACION_TIMEOUT_SECONDS', '0'],
  ])('%s=%s is refused, naming it', (variable, value) => {
    expectOneLineNaming(configErrorFor({ STRIPE_SECRET_KEY: 'sk_test_abcdefgh12345678', [variable]: value }), variable);
  });

  it('a bad secret key is never echoed', () => {
    expect(configErrorFor({ STRIPE_SECRET_KEY: 'sk_test_short' }).message).not.toContain('sk_test_short');
  });
});

describe('loadConfig: NODE_ENV=production refuses the development conveniences', () => {
  it('a complete production environment is accepted', () => {
    const config = loadConfig(PRODUCTION);
    expect(config.apiClients).toEqual([{ clientId: 'alice', token: TOKEN_A }]);
    expect(config.databaseUrl).toBe(PRODUCTION.DATABASE_URL);
    expect(config.webhooks.allowInsecureUrls).toBe(false);
    expect(loadConfig({ ...PRODUCTION, WEBHOOKS_ALLOW_INSECURE_URLS: 'false' }).webhooks.allowInsecureUrls).toBe(false);
  });

  it.each([
    ['without API_TOKENS (the README\'s demo token would work)', { API_TOKENS: undefined }, 'API_TOKENS'],
    ['with API_TOKENS left empty', { API_TOKENS: '' }, 'API_TOKENS'],
    ['with the demo token among API_TOKENS', { API_TOKENS: `alice:${TOKEN_A},${DEMO_API_TOKENS}` }, 'API_TOKENS'],
    ['with the demo token under another client id', { API_TOKENS: 'shop:demo-token-change-me-0001' }, 'API_TOKENS'],
    ['without DATABASE_URL (the embedded PostgreSQL, superuser postgres/postgres)', { DATABASE_URL: undefined }, 'DATABASE_URL'],
    ['with WEBHOOKS_ALLOW_INSECURE_URLS=true', { WEBHOOKS_ALLOW_INSECURE_URLS: 'true' }, 'WEBHOOKS_ALLOW_INSECURE_URLS'],
  ])('refuses to start %s, in one line naming it', (_name, change, variable) => {
    const error = configErrorFor({ ...PRODUCTION, ...change });
    expectOneLineNaming(error, variable);
    expect(error.message).toContain('NODE_ENV=production');
    expect(error.message).not.toContain(TOKEN_A);
  });

  it('outside production the same settings are allowed (development, tests)', () => {
    expect(loadConfig({ NODE_ENV: 'development', WEBHOOKS_ALLOW_INSECURE_URLS: 'true' }).webhooks.allowInsecureUrls).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).databaseUrl).toBeUndefined();
  });
});

describe('loadConfig: waiting duplicates (Prefer: wait)', () => {
  it('the wait bounds, the waiter cap and the listen URL come through typed', () => {
    const config = loadConfig({
      IDEMPOTENCY_DEFAULT_WAIT_SECONDS: '2', IDEMPOTENCY_MAX_WAIT_SECONDS: '30', IDEMPOTENCY_MAX_WAITERS: '50',
      DATABASE_LISTEN_URL: 'postgres://app@db-primary:5432/pagos',
    });
    expect(config.idempotency.waiting).toEqual({ defaultSeconds: 2, maxSeconds: 30, maxWaiters: 50 });
    expect(config.databaseListenUrl).toBe('postgres://app@db-primary:5432/pagos');
  });

  it('a default wait longer than the longest wait is refused, naming both', () => {
    const error = configErrorFor({ IDEMPOTENCY_DEFAULT_WAIT_SECONDS: '11' });
    expectOneLineNaming(error, 'IDEMPOTENCY_DEFAULT_WAIT_SECONDS');
    expect(error.message).toContain('IDEMPOTENCY_MAX_WAIT_SECONDS (10)');
  });

  it.each([['IDEMPOTENCY_MAX_WAIT_SECONDS', '61'], ['IDEMPOTENCY_DEFAULT_WAIT_SECONDS', '-1'], ['IDEMPOTENCY_MAX_WAITERS', '1.5']])(
    '%s=%s is refused',
    (variable, value) => expectOneLineNaming(configErrorFor({ [variable]: value }), variable),
  );

  it('a bad DATABASE_LISTEN_URL is named, and its value hidden like any database URL', () => {
    const error = configErrorFor({ DATABASE_LISTEN_URL: 'mysql://app:hunter2@db/pagos' });
    expect(error.message).toContain('DATABASE_LISTEN_URL=(hidden): DATABASE_LISTEN_URL must be a postgres:// URL');
    expect(error.message).not.toContain('hunter2');
  });
});

describe('loadConfig: a bad number is reported as what it is', () => {
  it('PORT=abc is reported as not an integer, quoting "abc" as given', () => {
    const message = configErrorFor({ PORT: 'abc' }).message;
    expect(message).toContain('"abc"');
    expect(message).toContain('PORT must be a whole number');
  });

  it('a whitespace-only PORT is rejected, never read as port 0 (a random port)', () => {
    expectOneLineNaming(configErrorFor({ PORT: ' ' }), 'PORT');
  });
});

describe('every variable of the schema is documented where operators look', () => {
  const variables = [...new Set(getMetadataStorage().getTargetValidationMetadatas(EnvSchema, '', true, false).map((rule) => rule.propertyName))];

  it.each(variables)('%s is in .env.example and in the README configuration table', (variable) => {
    expect(readFileSync('.env.example', 'utf8')).toMatch(new RegExp(`^#? ?${variable}=`, 'm'));
    expect(readFileSync('README.md', 'utf8')).toContain(`| \`${variable}\` |`);
  });
});
