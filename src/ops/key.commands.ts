import type { Command } from 'commander';
import type { AppConfig } from '../config/app-config.js';
import { parseIdempotencyKey } from '../idempotency/idempotency-key.js';
import type { IdempotencyStore } from '../idempotency/idempotency.store.js';
import type { KeyDescription } from '../idempotency/idempotency.types.js';
import { describeLease, leaseOwnerOf } from './lease-owner.js';
import { knownClient, OpsError, opsConfig, withOps } from './ops-arguments.js';
import { printable, printFields, seconds } from './output.js';

interface KeyOptions {
  readonly client: string;
  readonly key: string;
}

/** `key show` and `key release`: one idempotency key of one client. */
export function addKeyCommands(program: Command): void {
  const key = program.command('key').description('inspect or release one idempotency key');
  key
    .command('show')
    .description("a key's state, lease age, operation id, stored status and expiry")
    .requiredOption('--client <id>', 'the API client (scope) the key belongs to')
    .requiredOption('--key <key>', 'the Idempotency-Key value, as the client sent it')
    .option('--body', 'also print the stored response body')
    .action((options: KeyOptions & { body?: boolean }) => showKey(options));
  key
    .command('release')
    .description('an in_flight key whose owner is gone → released, so the next retry takes it over at once')
    .requiredOption('--client <id>', 'the API client (scope) the key belongs to')
    .requiredOption('--key <key>', 'the Idempotency-Key value, as the client sent it')
    .option('--force', 'release it even though its owner renewed the lease recently (its work then rolls back)')
    .action((options: KeyOptions & { force?: boolean }) => releaseKey(options));
}

async function showKey(options: KeyOptions & { body?: boolean }): Promise<void> {
  const { config, scope, key } = await checkedKey(options);
  await withOps(config, async ({ keys }) => {
    const found = await describe(keys, scope, key);
    printFields([
      ['client', found.scope],
      ['key', found.key],
      ['state', found.expired ? `${found.status} (expired: a new request with this key starts a new operation)` : found.status],
      ['lease age', found.leaseAgeSeconds === null ? '-' : describeLease(found, config.idempotency.lockTimeoutSeconds)],
      ['operation id', found.operationId],
      ['stored status', found.responseStatus === null ? '-' : String(found.responseStatus)],
      ['created', found.createdAt.toISOString()],
      ['expires', found.expiresAt.toISOString()],
    ]);
    if (options.body) console.log(printable(found.responseBody ?? '(no stored body)'));
  });
}

async function releaseKey(options: KeyOptions & { force?: boolean }): Promise<void> {
  const { config, scope, key } = await checkedKey(options);
  await withOps(config, async ({ keys }) => {
    if (await keys.releaseAbandonedKey(scope, key, options.force === true)) {
      console.log(`released key ${key} of client ${scope}: the next retry with it takes the operation over at once`);
      return;
    }
    throw new OpsError(whyNotReleased(await describe(keys, scope, key), config.idempotency.lockTimeoutSeconds));
  });
}

/** The key, then the client, checked before anything opens: a typo costs a fraction of a second, not Nest's and the database's start-up. */
async function checkedKey(options: KeyOptions): Promise<{ config: AppConfig; scope: string; key: string }> {
  const key = keyOf(options.key);
  const config = await opsConfig();
  return { config, scope: knownClient(config, options.client), key };
}

async function describe(store: IdempotencyStore, scope: string, key: string): Promise<KeyDescription> {
  const found = await store.describeKey(scope, key);
  if (!found) throw new OpsError(`client ${scope} has no key ${key}`);
  return found;
}

function whyNotReleased(found: KeyDescription, lockTimeoutSeconds: number): string {
  if (found.expired) return `key ${found.key} has expired: there is nothing to release`;
  if (found.status !== 'in_flight') return `key ${found.key} is ${found.status}, not in_flight: nothing released`;
  const age = found.leaseAgeSeconds ?? 0;
  if (leaseOwnerOf(found, lockTimeoutSeconds) === 'gone') {
    return `key ${found.key}'s owner is gone (no renewal for ${seconds(age)}), but its lease lasts the lock timeout (${lockTimeoutSeconds} s): nothing released; --force releases it now`;
  }
  return `key ${found.key} is held by a live attempt (lease renewed ${seconds(age)} ago): nothing released; --force releases it anyway`;
}

function keyOf(value: string): string {
  const parsed = parseIdempotencyKey(value);
  if (!parsed.ok) throw new OpsError(`malformed key: ${parsed.reason}`);
  return parsed.key;
}
