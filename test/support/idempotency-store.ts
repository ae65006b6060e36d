import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { CONFIG_DEFAULTS } from '../../src/config/app-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { Transactions } from '../../src/database/transactions.js';
import { IdempotencyEvents } from '../../src/idempotency/idempotency.events.js';
import { IdempotencyPurgeJob } from '../../src/idempotency/idempotency-purge.job.js';
import type { IdempotencyOptions } from '../../src/idempotency/idempotency.options.js';
import { IdempotencyStore, isClaimLost } from '../../src/idempotency/idempotency.store.js';
import type { Claim, KeyRequest } from '../../src/idempotency/idempotency.types.js';

export interface StoreHarness {
  readonly dataSource: DataSource;
  readonly store: IdempotencyStore;
  /** The service's transaction helper on the same pool, for completing keys as the interceptor does. */
  readonly transactions: Transactions;
  readonly purgeJob: IdempotencyPurgeJob;
  close(): Promise<void>;
}

const DEFAULTS: IdempotencyOptions = {
  ttlSeconds: CONFIG_DEFAULTS.ttlSeconds,
  lockTimeoutSeconds: CONFIG_DEFAULTS.lockTimeoutSeconds,
  purgeCron: CONFIG_DEFAULTS.purgeCron,
  scopeOf: () => 'alice',
  // The store never waits; waiting needs the service's listener (see test/e2e/prefer-wait.e2e-spec.ts).
  waiting: { defaultSeconds: 0, maxSeconds: 0, maxWaiters: 0 },
  replayCache: { entries: 0, seconds: 1 },
};

/**
 * The idempotency store and purge job of the service, on their own connection pool to a database the
 * service already migrated: for racing the state-machine statements directly. Real: the store, the
 * statements, Transactions, node-postgres (in pipeline mode, as in the service), PostgreSQL. Nothing is scheduled (the job is driven by `purgeOnce`).
 */
export async function openStore(url: string, options: Partial<IdempotencyOptions> & { poolSize?: number } = {}): Promise<StoreHarness> {
  const { poolSize = 10, ...overrides } = options;
  const settings = { ...DEFAULTS, ...overrides };
  const dataSource = await new DataSource(dataSourceOptions({ url, poolSize })).initialize();
  const store = new IdempotencyStore(dataSource, settings, url);
  const purgeJob = new IdempotencyPurgeJob(store, new SchedulerRegistry(), new IdempotencyEvents(), settings);
  return { dataSource, store, transactions: new Transactions(dataSource), purgeJob, close: () => dataSource.destroy() };
}

/** Claims the key of `request`; anything but a claim fails the test. */
export async function claimKeyOf(store: IdempotencyStore, request: KeyRequest): Promise<Claim> {
  const outcome = await store.claimKey(request);
  if (outcome.kind !== 'claimed') throw new Error(`expected a claim, got ${outcome.kind}`);
  return outcome.claim;
}

/** Completes in a transaction of its own: true when stored; false when the claim was lost (the transaction rolled back). */
export function completeOf(harness: StoreHarness, claim: Claim, body = '{}'): Promise<boolean> {
  return harness.transactions.run((tx) => harness.store.completeKey(tx, claim, { status: 201, headers: {}, body })).then(
    () => true,
    (error: unknown) => (isClaimLost(error) ? false : Promise.reject(error)),
  );
}
