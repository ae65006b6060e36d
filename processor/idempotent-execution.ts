import type pg from 'pg';
import { type Answer, apiErrorAnswer, errorAnswer, RequestRejection } from './answers.js';
import type { FaultInjector, Operation } from './faults.js';
import type { FormObject } from './form-body.js';
import { claimKey, completeKey, findKey, type Lease, releaseKey, requestHash, takeOverStaleKey } from './idempotency-keys.js';
import { inTransaction, type Queryable } from './transaction.js';

export interface ExecutionContext {
  readonly pool: pg.Pool;
  /** This instance, as its claims name it (see instance-liveness.ts). */
  readonly instance: number;
  readonly faults: FaultInjector;
  /** How long a money-moving call takes: half before its work, half between commit and answer. */
  readonly latencyMs: number;
  readonly log: (line: string) => void;
}

export interface OperationRequest {
  readonly operation: Operation;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly params: FormObject;
  /** POSTs only; keys do not apply to GETs. */
  readonly idempotencyKey: string | undefined;
  readonly movesMoney: boolean;
}

/** The endpoint itself: reads and writes in `tx`, returns the answer to commit with them. */
export type OperationWork = (tx: Queryable) => Promise<Answer>;

export interface Delivery {
  readonly answer: Answer;
  readonly replayed: boolean;
  /** `drop_after`: the work is committed, and the connection is reset instead of answered. */
  readonly dropConnection: boolean;
}

// Stripe's own limit on an Idempotency-Key's length.
const MAX_KEY_LENGTH = 255;
// A key released between our claim and our look at it is claimed again; more than this is a storm.
const CLAIM_ATTEMPTS = 3;

type Claim = { kind: 'claimed'; lease: Lease } | { kind: 'answered'; delivery: Delivery };

/** Runs `work` at most once per idempotency key (across every instance on the database), as Stripe does. */
export async function execute(context: ExecutionContext, request: OperationRequest, work: OperationWork): Promise<Delivery> {
  const key = request.idempotencyKey;
  if (key === undefined) return executeOnce(context, request, work, undefined);
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    return firstAnswer(errorAnswer(400, { type: 'invalid_request_error', message: `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters long.` }));
  }
  const claim = await claimOrAnswer(context, key, requestHash(request.method, request.path, request.params));
  return claim.kind === 'claimed' ? executeOnce(context, request, work, claim.lease) : claim.delivery;
}

async function claimOrAnswer({ pool, instance }: ExecutionContext, key: string, hash: string): Promise<Claim> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const lease = await claimKey(pool, key, hash, instance);
    if (lease) return { kind: 'claimed', lease };
    const existing = await findKey(pool, key);
    if (existing.state === 'absent') continue;
    if (existing.state === 'completed') {
      if (existing.requestHash !== hash) return { kind: 'answered', delivery: firstAnswer(idempotencyMismatch(key)) };
      return { kind: 'answered', delivery: { answer: existing.answer, replayed: true, dropConnection: false } };
    }
    if (!existing.stale) return { kind: 'answered', delivery: firstAnswer(keyInUse(key)) };
    if (existing.requestHash !== hash) return { kind: 'answered', delivery: firstAnswer(idempotencyMismatch(key)) };
    const takenOver = await takeOverStaleKey(pool, key, hash, instance);
    if (takenOver) return { kind: 'claimed', lease: takenOver };
  }
  return { kind: 'answered', delivery: firstAnswer(keyInUse(key)) };
}

async function executeOnce(context: ExecutionContext, request: OperationRequest, work: OperationWork, lease: Lease | undefined): Promise<Delivery> {
  const fault = context.faults.take(request.operation);
  if (fault?.fault === 'error_before') return commitAnswer(context, request, lease, async () => apiErrorAnswer());
  if (fault?.fault === 'latency') await sleep(fault.latencyMs);
  const latencyBefore = request.movesMoney ? Math.floor(context.latencyMs / 2) : 0;
  await sleep(latencyBefore);
  const answerAfterFault: OperationWork = async (tx) => {
    const real = await work(tx);
    return fault?.fault === 'error_after' ? apiErrorAnswer() : real;
  };
  const delivery = await commitAnswer(context, request, lease, answerAfterFault);
  if (request.movesMoney) await sleep(context.latencyMs - latencyBefore);
  return fault?.fault === 'drop_after' ? { ...delivery, dropConnection: true } : delivery;
}

/** The work and the key's completion with its answer, in one transaction: both commit or neither does. */
async function commitAnswer(context: ExecutionContext, request: OperationRequest, lease: Lease | undefined, work: OperationWork): Promise<Delivery> {
  try {
    const answer = await inTransaction(context.pool, async (tx) => {
      const answer = await work(tx);
      return lease ? completeOrThrow(tx, lease, answer) : answer;
    });
    return firstAnswer(answer);
  } catch (error) {
    return answerFailure(context, request, lease, error);
  }
}

class LeaseLostError extends Error {}

async function completeOrThrow(tx: Queryable, lease: Lease, stored: Answer): Promise<Answer> {
  if (!(await completeKey(tx, lease, stored))) throw new LeaseLostError('another instance took this key over');
  return stored;
}

/** The transaction rolled back: nothing happened, so the key is released and the answer not stored. */
async function answerFailure(context: ExecutionContext, request: OperationRequest, lease: Lease | undefined, error: unknown): Promise<Delivery> {
  if (error instanceof LeaseLostError) return firstAnswer(keyInUse(lease!.key));
  if (lease) {
    await releaseKey(context.pool, lease).catch((releaseError: Error) =>
      context.log(`could not release idempotency key ${lease.key} (it goes stale in time): ${releaseError.message}`),
    );
  }
  if (error instanceof RequestRejection) return firstAnswer(error.answer);
  context.log(`${request.operation} ${request.path} failed: ${(error as Error).message}`);
  return firstAnswer(apiErrorAnswer());
}

/** An answer given by this request itself (stored or not), not a replay. */
function firstAnswer(answer: Answer): Delivery {
  return { answer, replayed: false, dropConnection: false };
}

function idempotencyMismatch(key: string): Answer {
  return errorAnswer(400, {
    type: 'idempotency_error',
    message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
  });
}

function keyInUse(key: string): Answer {
  return errorAnswer(409, {
    type: 'invalid_request_error',
    code: 'idempotency_key_in_use',
    message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
  });
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
