import { afterAll, afterEach, beforeAll } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from './app-process.js';
import { connect, createTestDatabase } from './test-database.js';

/** Cron expressions for PAGOS_RECONCILE_CRON in tests: a pass every second, or none within a test run. */
export const RECONCILE_EVERY_SECOND = '* * * * * *';
export const RECONCILE_NEVER = '0 0 0 1 1 *';
/**
 * The embedded processors send no webhooks, as Stripe with no endpoint registered: for tests of the
 * route's own writes or of the reconciler, which a webhook deciding the payment first would hide.
 * Every service on one database must say so: any of their processors may deliver any event.
 */
export const NO_WEBHOOKS = { LOCAL_PROCESSOR_WEBHOOKS: 'false' } as const;

export interface SurvivorAndVictims {
  readonly url: string;
  /** A direct connection for assertions and for dating rows back. */
  readonly db: pg.Client;
  /** Runs for the whole file and reconciles every second: what settles what a victim abandoned. */
  readonly survivor: AppProcess;
  /** A process to kill mid-request; it never reconciles unless `env` says so, and is SIGKILLed after each test. */
  startVictim(env?: Record<string, string>): Promise<AppProcess>;
}

/**
 * The set-up of a crash test: a database of its own, a surviving service process, and the victims a
 * test starts and kills. Registers the Jest hooks that start and stop them; call it inside `describe`.
 */
export function survivorAndVictims(database: string, env: Record<string, string> = {}): SurvivorAndVictims {
  let url: string;
  let db: pg.Client;
  let survivor: AppProcess;
  const victims: AppProcess[] = [];

  beforeAll(async () => {
    url = await createTestDatabase(database);
    survivor = await startAppProcess(url, { ...env, PAGOS_RECONCILE_CRON: RECONCILE_EVERY_SECOND });
    db = await connect(url);
  });

  afterEach(async () => {
    await Promise.all(victims.splice(0).map((victim) => victim.stop('SIGKILL')));
  });

  afterAll(async () => {
    await db?.end();
    await survivor?.stop('SIGKILL');
  });

  return {
    get url() {
      return url;
    },
    get db() {
      return db;
    },
    get survivor() {
      return survivor;
    },
    async startVictim(victimEnv = {}) {
      const victim = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false', PAGOS_RECONCILE_CRON: RECONCILE_NEVER, ...env, ...victimEnv });
      victims.push(victim);
      return victim;
    },
  };
}
