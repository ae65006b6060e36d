import { type Command, InvalidArgumentError } from 'commander';
import type { ClaimState } from '../idempotency/idempotency.types.js';
import type { PendingOperation } from '../pagos/abandoned-operations.js';
import { leaseOwnerOf } from './lease-owner.js';
import { opsConfig, withOps } from './ops-arguments.js';
import { parseDuration, seconds } from './output.js';

// A list for a person to read; more than this many stuck payments is an incident, not a list.
const PENDING_LIST_LIMIT = 1000;

/** `pagos pending` and `pagos reconcile`: payments and refunds left PENDIENTE, and settling them now. */
export function addPagosCommands(program: Command): void {
  const pagos = program.command('pagos').description('payments and refunds still PENDIENTE, and the reconciler');
  pagos
    .command('pending')
    .description('payments and refunds still PENDIENTE, with the state of their operation’s claim')
    .option('--older-than <duration>', 'only those untouched for at least this long: 90, 90s, 15m, 2h', durationOption, 0)
    .action((options: { olderThan: number }) => listPending(options.olderThan));
  pagos
    .command('reconcile')
    .description('one reconciler pass now, printing what it settled')
    .action(() => reconcileNow());
}

async function listPending(olderThanSeconds: number): Promise<void> {
  const config = await opsConfig();
  await withOps(config, async ({ keys, reconciler }) => {
    const pending = await reconciler.stalePending(olderThanSeconds, PENDING_LIST_LIMIT);
    const claims = await keys.findOperationClaims(pending.map((operation) => operation.operationId));
    if (pending.length === 0) console.log('no payment or refund is PENDIENTE');
    for (const operation of pending) console.log(`${describe(operation)}  claim: ${describeClaim(claims.get(operation.operationId), config.idempotency.lockTimeoutSeconds)}`);
  });
}

async function reconcileNow(): Promise<void> {
  await withOps(await opsConfig(), async ({ reconciler }) => {
    const reconciled = await reconciler.reconcileOnce();
    if (reconciled.length === 0) console.log('nothing to settle');
    for (const { pending, result } of reconciled) console.log(`${describe(pending)}  → ${result}`);
  });
}

function describe(operation: PendingOperation<unknown>): string {
  const age = (Date.now() - operation.actualizadoEn.getTime()) / 1000;
  return `${operation.summary}  untouched ${seconds(age)}`;
}

function describeClaim(claim: ClaimState | undefined, lockTimeoutSeconds: number): string {
  if (!claim) return 'none (no live key: the reconciler settles it by itself)';
  const who = `key ${claim.key}`;
  if (claim.status !== 'in_flight') return `${claim.status} (${who})`;
  const lease = seconds(claim.leaseAgeSeconds ?? 0);
  // Gone once it missed its renewals (lease-owner.ts), not only once a retry may take it over.
  const live = leaseOwnerOf(claim, lockTimeoutSeconds) === 'live';
  return live ? `in_flight, live (lease renewed ${lease} ago, ${who})` : `in_flight, owner gone (lease ${lease} old, ${who})`;
}

function durationOption(value: string): number {
  const parsed = parseDuration(value);
  if (parsed === undefined) throw new InvalidArgumentError('a duration such as 90, 90s, 15m or 2h');
  return parsed;
}
