import 'reflect-metadata';
import { Transform } from 'class-transformer';
import { applyDecorators } from '@nestjs/common';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, Validate } from 'class-validator';
import { CronExpressionConstraint, DatabaseUrlConstraint, ProcessorUrlConstraint, RedisUrlConstraint } from './env.constraints.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** `auto`: human-readable on a terminal, JSON lines everywhere else (containers, CI, files). */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Decimal digits become a number; anything else ("abc", " ", "1e3") stays a string and fails IsInt. */
function WholeNumber(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value)),
    IsInt({ message: ({ property }) => `${property} must be a whole number` }),
  );
}

/**
 * Every environment variable the service reads, with its rule. Defaults live in
 * `app-config.ts`, next to the reason for each.
 */
export class EnvSchema {
  @IsOptional()
  @WholeNumber()
  @Min(0)
  @Max(65535)
  PORT?: number;

  @IsOptional()
  @Validate(DatabaseUrlConstraint)
  DATABASE_URL?: string;

  /** The connections that keep a session (LISTEN, the partition purge's lock); must reach PostgreSQL itself, not a transaction-mode pooler. */
  @IsOptional()
  @Validate(DatabaseUrlConstraint)
  DATABASE_LISTEN_URL?: string;

  @IsOptional()
  @IsIn(['true', 'false'])
  DB_MIGRATIONS_RUN?: string;

  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(200)
  DB_POOL_SIZE?: number;

  @IsOptional()
  @IsString()
  EMBEDDED_PG_DATA_DIR?: string;

  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(65535)
  EMBEDDED_PG_PORT?: number;

  /** `clientId:token` pairs separated by commas. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9._-]+:[^\s,:]{16,}(,[A-Za-z0-9._-]+:[^\s,:]{16,})*$/, {
    message: 'API_TOKENS must be clientId:token pairs separated by commas, each token at least 16 characters',
  })
  API_TOKENS?: string;

  @IsOptional()
  @WholeNumber()
  @Min(60)
  @Max(30 * 86400)
  IDEMPOTENCY_TTL_SECONDS?: number;

  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(3600)
  IDEMPOTENCY_LOCK_TIMEOUT_SECONDS?: number;

  @IsOptional()
  @Validate(CronExpressionConstraint)
  IDEMPOTENCY_PURGE_CRON?: string;

  /** At most IDEMPOTENCY_MAX_WAIT_SECONDS (checked in app-config.ts). */
  @IsOptional()
  @WholeNumber()
  @Min(0)
  @Max(60)
  IDEMPOTENCY_DEFAULT_WAIT_SECONDS?: number;

  /** At most 60: proxies cut an answer that takes longer (nginx's proxy_read_timeout is 60 s). */
  @IsOptional()
  @WholeNumber()
  @Min(0)
  @Max(60)
  IDEMPOTENCY_MAX_WAIT_SECONDS?: number;

  @IsOptional()
  @WholeNumber()
  @Min(0)
  @Max(100_000)
  IDEMPOTENCY_MAX_WAITERS?: number;

  /** Completed answers kept in memory per process to replay without a round trip (0: none). */
  @IsOptional()
  @WholeNumber()
  @Min(0)
  @Max(1_000_000)
  IDEMPOTENCY_REPLAY_CACHE_ENTRIES?: number;

  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(3600)
  IDEMPOTENCY_REPLAY_CACHE_SECONDS?: number;

  @IsOptional()
  @Validate(CronExpressionConstraint)
  PAGOS_RECONCILE_CRON?: string;

  /** `true` allows webhook URLs over http and to loopback, private and other internal addresses (development, tests). */
  @IsOptional()
  @IsIn(['true', 'false'])
  WEBHOOKS_ALLOW_INSECURE_URLS?: string;

  /** Webhook endpoints one client may have at once; 1 … 1000 (each event fans out to every one of them). */
  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(1000)
  WEBHOOKS_MAX_PER_CLIENT?: number;

  /** Events are kept (GET /eventos, redelivery) at least this many days. */
  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(3650)
  EVENTS_TTL_DAYS?: number;

  /** Seconds before each retry of a failed delivery, comma separated (1 to 20 retries). */
  @IsOptional()
  @Matches(/^\d{1,6}(,\d{1,6}){0,19}$/, { message: 'WEBHOOK_RETRY_SCHEDULE must be whole seconds separated by commas, e.g. 5,300,1800' })
  WEBHOOK_RETRY_SCHEDULE?: string;

  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(60)
  WEBHOOK_TIMEOUT_SECONDS?: number;

  /** `production` refuses the development conveniences: see env.safety.ts (API_TOKENS, DATABASE_URL, WEBHOOKS_ALLOW_INSECURE_URLS, STRIPE_*). */
  @IsOptional()
  @IsString()
  NODE_ENV?: string;

  /** Unset: the embedded local processor. A secret (`sk_`) or restricted (`rk_`) key, test or live. */
  @IsOptional()
  @Matches(/^(sk|rk)_(test|live)_[A-Za-z0-9_]{8,}$/, { message: 'STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_…)' })
  STRIPE_SECRET_KEY?: string;

  /** The signing secret of the endpoint registered in Stripe for POST /stripe/webhooks. */
  @IsOptional()
  @Matches(/^whsec_[A-Za-z0-9+/=_-]{8,}$/, { message: 'STRIPE_WEBHOOK_SECRET must be a Stripe webhook signing secret (whsec_…)' })
  STRIPE_WEBHOOK_SECRET?: string;

  /** How long a payment waits for the customer's 3-D Secure authentication before it is canceled. */
  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(86400)
  AUTENTICACION_TIMEOUT_SECONDS?: number;

  /** Only with STRIPE_SECRET_KEY (checked in app-config.ts). */
  @IsOptional()
  @Validate(ProcessorUrlConstraint)
  STRIPE_API_URL?: string;

  @IsOptional()
  @WholeNumber()
  @Min(100)
  @Max(120000)
  STRIPE_TIMEOUT_MS?: number;

  @IsOptional()
  @WholeNumber()
  @Min(0)
  @Max(5)
  STRIPE_MAX_NETWORK_RETRIES?: number;

  /** The embedded local processor only: its port (0: any free one). */
  @IsOptional()
  @WholeNumber()
  @Min(0)
  @Max(65535)
  LOCAL_PROCESSOR_PORT?: number;

  /** The embedded local processor only: `false` sends no webhooks (outcomes after the answer wait for the reconciler). */
  @IsOptional()
  @IsIn(['true', 'false'])
  LOCAL_PROCESSOR_WEBHOOKS?: string;

  /** The embedded local processor only: how long a confirmation or a refund takes there. */
  @IsOptional()
  @WholeNumber()
  @Min(0)
  @Max(120000)
  GATEWAY_LATENCY_MS?: number;

  /** No upper bound: both rate-limit stores keep one counter per client and window, whatever the limit. */
  @IsOptional()
  @WholeNumber()
  @Min(1)
  RATE_LIMIT_REQUESTS?: number;

  @IsOptional()
  @WholeNumber()
  @Min(1)
  @Max(3600)
  RATE_LIMIT_WINDOW_SECONDS?: number;

  /** Set: the rate-limit counters live in this Redis, shared by every replica. Unset: in each process. */
  @IsOptional()
  @Validate(RedisUrlConstraint)
  REDIS_URL?: string;

  /** Prefix of the rate-limit keys in Redis, so that several deployments (or test runs) can share one. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9:._-]{1,64}$/, { message: 'RATE_LIMIT_REDIS_PREFIX must be 1–64 of A-Z a-z 0-9 : . _ -' })
  RATE_LIMIT_REDIS_PREFIX?: string;

  @IsOptional()
  @IsIn(LOG_LEVELS)
  LOG_LEVEL?: LogLevel;

  @IsOptional()
  @IsIn(LOG_FORMATS)
  LOG_FORMAT?: LogFormat;
}
