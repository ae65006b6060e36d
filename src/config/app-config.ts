import { existsSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import type { ConfigService } from '@nestjs/config';
import { ConfigError } from './config.error.js';
import { assertSafeEnvironment, DEMO_API_TOKENS } from './env.safety.js';
import { EnvSchema, type LogFormat, type LogLevel } from './env.schema.js';

export { ConfigError } from './config.error.js';
export { DEMO_API_TOKENS } from './env.safety.js';

export interface ApiClient {
  readonly clientId: string;
  readonly token: string;
}

export interface AppConfig {
  readonly port: number;
  /** Undefined means "start the embedded PostgreSQL". */
  readonly databaseUrl: string | undefined;
  /** Undefined means "the same as databaseUrl" (or the embedded PostgreSQL). */
  readonly databaseListenUrl: string | undefined;
  readonly runMigrationsOnStart: boolean;
  readonly dbPoolSize: number;
  readonly embeddedPg: { readonly dataDir: string; readonly port: number; readonly database: string };
  readonly apiClients: readonly ApiClient[];
  readonly idempotency: {
    readonly ttlSeconds: number;
    readonly lockTimeoutSeconds: number;
    readonly purgeCron: string;
    /** Duplicates of a key in flight waiting for its answer (`Prefer: wait`). */
    readonly waiting: { readonly defaultSeconds: number; readonly maxSeconds: number; readonly maxWaiters: number };
    /** Completed answers replayed from memory (see ReplayCache). */
    readonly replayCache: { readonly entries: number; readonly seconds: number };
  };
  readonly pagos: {
    /** When the reconciler settles payments their clients abandoned (cron syntax with seconds). */
    readonly reconcileCron: string;
    /** A payment waiting for the customer's authentication longer than this is canceled by the reconciler. */
    readonly autenticacionTimeoutSeconds: number;
  };
  /** Events are purged once older than this (with the keys' purge schedule). */
  readonly eventsTtlDays: number;
  readonly webhooks: {
    /** http URLs and internal hosts allowed: only for local development and tests (no SSRF protection). */
    readonly allowInsecureUrls: boolean;
    /** Seconds before each retry of a failed delivery; the endpoint is disabled when the last one fails. */
    readonly retryScheduleSeconds: readonly number[];
    /** One attempt's bound, connection to last byte. */
    readonly timeoutSeconds: number;
    /** Endpoints one client may have registered at once; one more is refused (409). */
    readonly maxPerClient: number;
  };
  /**
   * Where payments are charged. No secret key: the embedded local processor (Stripe-compatible, no
   * real money), which main.ts starts and then fills `apiUrl` and `secretKey` in from.
   */
  readonly processor: {
    readonly secretKey: string | undefined;
    readonly apiUrl: string;
    readonly timeoutMs: number;
    readonly maxNetworkRetries: number;
    /** Verifies the processor's webhooks; the entry point makes one up for the local processor. */
    readonly webhookSecret: string | undefined;
  };
  /** The embedded local processor's time for a confirmation or a refund (half before the work, half after). */
  readonly gatewayLatencyMs: number;
  /** Where the embedded local processor listens (0: any free port): the example client's test routes reach it there. */
  readonly localProcessorPort: number;
  /**
   * Whether the embedded local processor sends its webhooks to the service. Off, it behaves as Stripe
   * with no endpoint registered: what it learns after answering reaches the service through the reconciler.
   */
  readonly localProcessorWebhooks: boolean;
  /**
   * Requests per client per window on rate-limited routes (POST /pagos), replays included; counted
   * in Redis when `redisUrl` is set (shared by the replicas), else in the process.
   */
  readonly rateLimit: { readonly requests: number; readonly windowSeconds: number; readonly redisUrl: string | undefined; readonly redisKeyPrefix: string };
  readonly log: { readonly level: LogLevel; readonly format: LogFormat };
}

/** The validated configuration as modules inject it: `config.get('idempotency', { infer: true })`. */
export type AppConfigService = ConfigService<AppConfig, true>;

export const CONFIG_DEFAULTS = {
  // 3000 is the NestJS convention and what the README's curl examples use.
  port: 3000,
  // 10 keeps a 2-core box below PostgreSQL's default max_connections with several replicas.
  dbPoolSize: 10,
  embeddedPgDataDir: '.data/pg',
  // Not 5432: the machine's own PostgreSQL usually listens there.
  embeddedPgPort: 54329,
  // 24 h outlives any realistic retry: backoff (minutes) + the user reopening the app the next morning.
  ttlSeconds: 86400,
  // Longer than the slowest gateway call plus its timeout, so a live request is never taken over.
  lockTimeoutSeconds: 60,
  // Every 10 minutes: expired keys are already ignored on read, and a day's partition is dropped at
  // most 10 minutes after its last key expired; a run with nothing to drop costs two catalog reads.
  purgeCron: '0 */10 * * * *',
  // Every 30 s: an abandoned payment is settled within a lock timeout plus 30 s, and a pass over the
  // few PENDIENTE rows costs one indexed read when there is nothing to do.
  reconcileCron: '*/30 * * * * *',
  // 15 min: Stripe's 3-D Secure challenge is done in a minute or two; past a quarter hour the customer
  // has left, and the order should be free to pay again.
  autenticacionTimeoutSeconds: 900,
  // 0: a duplicate that did not ask to wait gets 409 at once, as with Stripe and the IETF draft, so
  // clients written for that keep their behaviour; waiting is what `Prefer: wait` opts into.
  defaultWaitSeconds: 0,
  // 10 s covers a slow charge (most finish within a second or two) and stays under mobile clients'
  // usual request timeouts, so the waiter is still there to read the answer.
  maxWaitSeconds: 10,
  // 1000 waiting sockets per process cost little memory and file descriptors, and bound the burst
  // of re-reads on the pool when their keys settle at once.
  maxWaiters: 1000,
  // 10,000 answers, 20 MiB at most (ReplayCache counts 2 KiB an entry on average; a payment's is about
  // 600 bytes). A client's retries come within seconds to minutes, and a completed answer never
  // changes, so a minute in memory serves a retry storm from one read.
  replayCacheEntries: 10_000,
  replayCacheSeconds: 60,
  stripeApiUrl: 'https://api.stripe.com',
  // 10 s: a card confirmation takes 1–3 s at Stripe; three tries (two SDK retries) stay within the
  // 60 s lock timeout, so the attempt still owns its key when its last try answers.
  stripeTimeoutMs: 10_000,
  // The SDK's default; each retry resends the same idempotency key, so it never charges twice.
  stripeMaxNetworkRetries: 2,
  gatewayLatencyMs: 0,
  // stripe-mock's port, as `npm run processor` uses: tools and the example client expect a Stripe stand-in there.
  localProcessorPort: 12111,
  // 300 payments a minute per API client (a merchant's backend, not one phone) absorbs checkout peaks
  // and retry storms of a healthy client while capping a runaway one; tune per contract.
  rateLimitRequests: 300,
  rateLimitWindowSeconds: 60,
  // Names the service and what the keys hold, so that a Redis shared with other services stays readable.
  rateLimitRedisPrefix: 'pagos:rate-limit:',
  logLevel: 'info',
  logFormat: 'auto',
  // The Standard Webhooks spec's suggestion: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — over a day and
  // a half, so a consumer down for a night's deploy or a weekend morning still gets every event.
  webhookRetrySchedule: '5,300,1800,7200,18000,36000,36000',
  // As Stripe: a consumer should acknowledge at once and work later; 10 s bounds a hung one.
  webhookTimeoutSeconds: 10,
  // 20: a merchant needs a handful (production, staging, a partner or two), as Stripe's 16 per
  // account; every event fans out to each one, so the cap bounds what one client adds to the queue.
  webhooksMaxPerClient: 20,
  // As Stripe keeps events: a consumer back from a month's outage can still catch up from the feed.
  eventsTtlDays: 30,
} as const;

/**
 * The process environment, with `.env` from the working directory underneath it when present
 * (a variable already set in the environment wins).
 */
export function readEnvironment(envFile = '.env'): NodeJS.ProcessEnv {
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  return process.env;
}

export function loadConfig(env: NodeJS.ProcessEnv): AppConfig {
  const parsed = plainToInstance(EnvSchema, withoutEmptyValues(env), { excludeExtraneousValues: false });
  const errors = validateSync(parsed, { forbidUnknownValues: false });
  if (errors.length > 0) throw new ConfigError(describe(errors[0]!));
  assertSafeEnvironment(parsed);
  const config = toAppConfig(parsed);
  assertConsistent(config);
  return config;
}

function toAppConfig(env: EnvSchema): AppConfig {
  const d = CONFIG_DEFAULTS;
  return {
    port: env.PORT ?? d.port,
    databaseUrl: env.DATABASE_URL,
    databaseListenUrl: env.DATABASE_LISTEN_URL,
    runMigrationsOnStart: env.DB_MIGRATIONS_RUN !== 'false',
    dbPoolSize: env.DB_POOL_SIZE ?? d.dbPoolSize,
    embeddedPg: { dataDir: env.EMBEDDED_PG_DATA_DIR ?? d.embeddedPgDataDir, port: env.EMBEDDED_PG_PORT ?? d.embeddedPgPort, database: 'pagos' },
    apiClients: parseApiTokens(env.API_TOKENS ?? DEMO_API_TOKENS),
    idempotency: {
      ttlSeconds: env.IDEMPOTENCY_TTL_SECONDS ?? d.ttlSeconds,
      lockTimeoutSeconds: env.IDEMPOTENCY_LOCK_TIMEOUT_SECONDS ?? d.lockTimeoutSeconds,
      purgeCron: env.IDEMPOTENCY_PURGE_CRON ?? d.purgeCron,
      waiting: {
        defaultSeconds: env.IDEMPOTENCY_DEFAULT_WAIT_SECONDS ?? d.defaultWaitSeconds,
        maxSeconds: env.IDEMPOTENCY_MAX_WAIT_SECONDS ?? d.maxWaitSeconds,
        maxWaiters: env.IDEMPOTENCY_MAX_WAITERS ?? d.maxWaiters,
      },
      replayCache: {
        entries: env.IDEMPOTENCY_REPLAY_CACHE_ENTRIES ?? d.replayCacheEntries,
        seconds: env.IDEMPOTENCY_REPLAY_CACHE_SECONDS ?? d.replayCacheSeconds,
      },
    },
    pagos: {
      reconcileCron: env.PAGOS_RECONCILE_CRON ?? d.reconcileCron,
      autenticacionTimeoutSeconds: env.AUTENTICACION_TIMEOUT_SECONDS ?? d.autenticacionTimeoutSeconds,
    },
    // Off unless asked for: a webhook URL is a request the service makes on a client's behalf.
    eventsTtlDays: env.EVENTS_TTL_DAYS ?? d.eventsTtlDays,
    webhooks: {
      allowInsecureUrls: env.WEBHOOKS_ALLOW_INSECURE_URLS === 'true',
      retryScheduleSeconds: (env.WEBHOOK_RETRY_SCHEDULE ?? d.webhookRetrySchedule).split(',').map(Number),
      timeoutSeconds: env.WEBHOOK_TIMEOUT_SECONDS ?? d.webhookTimeoutSeconds,
      maxPerClient: env.WEBHOOKS_MAX_PER_CLIENT ?? d.webhooksMaxPerClient,
    },
    processor: {
      secretKey: env.STRIPE_SECRET_KEY,
      apiUrl: env.STRIPE_API_URL ?? d.stripeApiUrl,
      timeoutMs: env.STRIPE_TIMEOUT_MS ?? d.stripeTimeoutMs,
      maxNetworkRetries: env.STRIPE_MAX_NETWORK_RETRIES ?? d.stripeMaxNetworkRetries,
      webhookSecret: env.STRIPE_WEBHOOK_SECRET,
    },
    gatewayLatencyMs: env.GATEWAY_LATENCY_MS ?? d.gatewayLatencyMs,
    localProcessorPort: env.LOCAL_PROCESSOR_PORT ?? d.localProcessorPort,
    localProcessorWebhooks: env.LOCAL_PROCESSOR_WEBHOOKS !== 'false',
    rateLimit: {
      requests: env.RATE_LIMIT_REQUESTS ?? d.rateLimitRequests,
      windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS ?? d.rateLimitWindowSeconds,
      // Unset by default: `npm start` stays one command, and one process needs no shared store.
      redisUrl: env.REDIS_URL,
      redisKeyPrefix: env.RATE_LIMIT_REDIS_PREFIX ?? d.rateLimitRedisPrefix,
    },
    log: { level: env.LOG_LEVEL ?? d.logLevel, format: env.LOG_FORMAT ?? d.logFormat },
  };
}

function assertConsistent(config: AppConfig): void {
  const { ttlSeconds, lockTimeoutSeconds, waiting } = config.idempotency;
  if (ttlSeconds <= lockTimeoutSeconds) {
    throw new ConfigError(
      `IDEMPOTENCY_TTL_SECONDS (${ttlSeconds}) must be greater than IDEMPOTENCY_LOCK_TIMEOUT_SECONDS (${lockTimeoutSeconds})`,
    );
  }
  if (waiting.defaultSeconds > waiting.maxSeconds) {
    throw new ConfigError(
      `IDEMPOTENCY_DEFAULT_WAIT_SECONDS (${waiting.defaultSeconds}) must not exceed IDEMPOTENCY_MAX_WAIT_SECONDS (${waiting.maxSeconds})`,
    );
  }
  const ids = config.apiClients.map((client) => client.clientId);
  const duplicate = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicate) throw new ConfigError(`API_TOKENS names client "${duplicate}" twice`);
  const tokens = config.apiClients.map((client) => client.token);
  if (new Set(tokens).size !== tokens.length) throw new ConfigError('API_TOKENS gives two clients the same token');
}

function parseApiTokens(value: string): ApiClient[] {
  return value.split(',').map((pair) => {
    const [clientId, token] = pair.split(':') as [string, string];
    return { clientId, token };
  });
}

// An exported-but-empty variable (FOO=) means "not set", as in most twelve-factor tools.
function withoutEmptyValues(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
}

// Their values may carry credentials, so they never reach a log line.
const SECRET_VARIABLES = new Set(['API_TOKENS', 'DATABASE_URL', 'DATABASE_LISTEN_URL', 'REDIS_URL', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET']);

function describe(error: ValidationError): string {
  // A value of the wrong kind fails every rule; saying so beats quoting an arbitrary bound.
  const constraints = error.constraints ?? {};
  const message = constraints.isInt ?? Object.values(constraints)[0];
  const value = SECRET_VARIABLES.has(error.property) ? '(hidden)' : JSON.stringify(error.value);
  return `Invalid configuration: ${error.property}=${value}: ${message ?? 'invalid value'}`;
}
