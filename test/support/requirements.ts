import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from '@jest/globals';

/**
 * Something outside npm that a test file needs (a binary, a running server). On a fresh developer
 * machine it may be missing: the file is then skipped as one test whose title says what is missing
 * and how to get it, and `test/support/skip-reporter.cjs` prints that title as a plain line at the
 * end of the run. Where it must run (`CI=true`, or the requirement's own `PAGOS_REQUIRE_*=1`; `.ci/run`
 * installs or starts everything and sets them all), the file runs anyway and fails as it would
 * without the skip, naming what is missing.
 */
export interface Requirement {
  /** What the file needs, in words: "the pgbouncer binary". */
  readonly what: string;
  /** How a person gets it: "apt-get install pgbouncer". */
  readonly howToGet: string;
  /** Set to 1 to turn a missing requirement into a failure outside CI. */
  readonly requireVariable: string;
  /** Synchronous: Jest collects a file's tests synchronously. */
  readonly isAvailable: () => boolean;
}

export const PGBOUNCER: Requirement = {
  what: 'the pgbouncer binary',
  howToGet: 'apt-get install pgbouncer',
  requireVariable: 'PAGOS_REQUIRE_PGBOUNCER',
  isAvailable: () => !spawnSync('pgbouncer', ['--version']).error,
};

/** A Patroni cluster on this machine (`test/support/patroni-cluster.ts`): Patroni, etcd and HAProxy, and PostgreSQL's binaries. */
export const PATRONI: Requirement = {
  what: 'patroni, etcd and haproxy (and PostgreSQL under /usr/lib/postgresql)',
  howToGet: 'apt-get install patroni etcd-server haproxy',
  requireVariable: 'PAGOS_REQUIRE_PATRONI',
  isAvailable: () => ['patroni', 'etcd', 'haproxy'].every((binary) => !spawnSync(binary, ['--version']).error) && existsSync('/usr/lib/postgresql'),
};

/** Debian's chromium, driven by playwright-core (`test/support/browser.ts`). */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM: Requirement = {
  what: `a Chromium at ${CHROMIUM_PATH}`,
  howToGet: 'apt-get install chromium',
  requireVariable: 'PAGOS_REQUIRE_BROWSER',
  isAvailable: () => isExecutable(CHROMIUM_PATH),
};

/** The Redis the rate-limit tests share: `REDIS_URL`, or the machine's default one. */
export const TEST_REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
export const REDIS: Requirement = {
  what: `a Redis server at ${TEST_REDIS_URL}`,
  howToGet: 'apt-get install redis-server (or point REDIS_URL at one)',
  requireVariable: 'PAGOS_REQUIRE_REDIS',
  isAvailable: () => spawnSync(process.execPath, [path.resolve('test/support/redis-ping.mjs'), TEST_REDIS_URL]).status === 0,
};

/**
 * `describe(name, body)` when the requirement is met or required; otherwise one skipped test saying
 * why, so that Jest's summary counts it and `skip-reporter.cjs` prints it.
 *
 * @example
 *   describeWhenAvailable(PGBOUNCER, 'two replicas through PgBouncer', () => { ... });
 */
export function describeWhenAvailable(requirement: Requirement, name: string, body: () => void): void {
  if (isRequired(requirement) || requirement.isAvailable()) {
    describe(name, body);
    return;
  }
  const { what, howToGet, requireVariable } = requirement;
  describe(name, () => {
    it.skip(`needs ${what}, which is missing: ${howToGet} to run it (CI=true or ${requireVariable}=1 make this a failure)`, () => undefined);
  });
}

function isRequired(requirement: Requirement): boolean {
  return process.env.CI === 'true' || process.env[requirement.requireVariable] === '1';
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
