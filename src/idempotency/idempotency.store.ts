import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import type { DroppedPartition } from '../database/daily-partitions.js';
import { SQLSTATE, sqlStateOf } from '../database/postgres-errors.js';
import type { Gate, GateRow } from '../database/gated-write.js';
import { pgPoolOf, type Queryable, queryRows } from '../database/query-rows.js';
import { SESSION_DATABASE_URL } from '../database/session-database-url.js';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import {
  CLAIM_KEY, CLAIM_LOST_SQLSTATE, COMPLETE_KEY, DESCRIBE_KEY, FIND_KEY, FIND_OPERATION_CLAIMS, MARK_KEY_WAITED,
  RELEASE_ABANDONED_KEY, RELEASE_KEY, RENEW_KEY, TAKE_OVER_KEY, TAKE_OVER_STALE_OPERATION,
} from './idempotency.sql.js';
import type {
  Claim, ClaimOutcome, ClaimState, KeyDescription, KeyRequest, StaleOperationOutcome, StoredResponse,
} from './idempotency.types.js';
import type { KeyStatus } from './idempotency-key-record.entity.js';
import { createKeyPartitions, dropExpiredKeyPartitions } from './key-partitions.js';

interface KeyRow {
  readonly requestHash: string;
  readonly status: KeyStatus;
  readonly operationId: string;
  readonly responseStatus: number | null;
  readonly responseHeaders: Record<string, string> | null;
  readonly responseBody: string | null;
  readonly leaseExpired: boolean | null;
  readonly expiresInSeconds: number;
}

type ClaimRow =
  | (KeyRow & { readonly claimed: false })
  | { readonly claimed: true; readonly operationId: string; readonly replacedExpired: boolean };

// claimKey and findKey can interleave with a purge or a release; a few rounds always settle it.
const MAX_CLAIM_ROUNDS = 3;

/** Runs the statements of `idempotency.sql.ts` and turns their rows into typed outcomes. No HTTP here. */
@Injectable()
export class IdempotencyStore {
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
    @Inject(SESSION_DATABASE_URL) private readonly sessionUrl: string,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async claimKey(request: KeyRequest): Promise<ClaimOutcome> {
    for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
      const lockToken = randomUUID();
      const [row] = await this.runClaim([
        request.scope, request.key, this.options.lockTimeoutSeconds, lockToken, request.fingerprint, randomUUID(), this.options.ttlSeconds,
      ]);
      if (row?.claimed) {
        const claim = { ...request, lockToken, operationId: row.operationId, resumed: false };
        return { kind: 'claimed', claim, origin: row.replacedExpired ? 'expired_key' : 'new_key' };
      }
      const existing = row ?? (await this.run<KeyRow>(FIND_KEY, [request.scope, request.key, this.options.lockTimeoutSeconds]))[0];
      if (existing) return this.outcomeOfExisting(request, existing);
    }
    return { kind: 'in_flight' };
  }

  /**
   * The claim of `claim`'s key as the gate of the handler's first write (see DeferredCommit.startWith):
   * the write runs, in the same statement, only if this claim won.
   */
  claimGate(claim: Claim): Gate {
    const { scope, key, fingerprint, lockToken, operationId } = claim;
    return { text: CLAIM_KEY, values: [scope, key, this.options.lockTimeoutSeconds, lockToken, fingerprint, operationId, this.options.ttlSeconds], opensOn: 'claimed' };
  }

  /**
   * What the gate's row says: the claim (ours only if its transaction then commits), what a live key
   * means for this request, or undefined when there is no row (the statement failed: claim again).
   */
  async outcomeOfGate(claim: Claim, row: GateRow | undefined): Promise<ClaimOutcome | undefined> {
    const claimRow = row as ClaimRow | undefined;
    if (!claimRow) return undefined;
    if (claimRow.claimed) return { kind: 'claimed', claim, origin: claimRow.replacedExpired ? 'expired_key' : 'new_key' };
    return this.outcomeOfExisting(claim, claimRow);
  }

  async renewKey(claim: Claim): Promise<boolean> {
    const rows = await this.run(RENEW_KEY, [claim.scope, claim.key, claim.lockToken]);
    return rows.length === 1;
  }

  /**
   * For a duplicate about to wait: its key's settlement will be notified. Call it after watching the
   * key and before reading it (see MARK_KEY_WAITED); false when it was marked already or is not in flight.
   */
  async markKeyWaited(request: KeyRequest): Promise<boolean> {
    const rows = await this.run(MARK_KEY_WAITED, [request.scope, request.key]);
    return rows.length === 1;
  }

  /**
   * Stores the answer in the caller's transaction. A lost claim rejects with an error that
   * {@link isClaimLost} recognises, and aborts that transaction: nothing of it is written.
   */
  async completeKey(db: Queryable, claim: Claim, response: StoredResponse): Promise<void> {
    await queryRows(db, COMPLETE_KEY, [claim.scope, claim.key, claim.lockToken, response.status, JSON.stringify(response.headers), response.body]);
  }

  /** Gives the claim up (on `db`, to commit with other writes); false means it was no longer ours. */
  async releaseKey(claim: Claim, db: Queryable = this.pool): Promise<boolean> {
    const rows = await queryRows(db, RELEASE_KEY, [claim.scope, claim.key, claim.lockToken]);
    return rows.length === 1;
  }

  /**
   * For a job settling operations no client came back for: takes over the claim of `operationId` if
   * its owner is gone. The job then completes or releases it like any owner.
   */
  async takeOverStaleOperation(operationId: string): Promise<StaleOperationOutcome> {
    const lockToken = randomUUID();
    const [row] = await this.run<{ state: 'taken' | 'held'; scope: string; key: string; requestHash: string }>(TAKE_OVER_STALE_OPERATION, [
      operationId, this.options.lockTimeoutSeconds, lockToken,
    ]);
    if (!row) return { kind: 'unclaimed' };
    if (row.state === 'held') return { kind: 'held' };
    return { kind: 'taken', claim: { scope: row.scope, key: row.key, fingerprint: row.requestHash, lockToken, operationId, resumed: true } };
  }

  /** For an operator: an in_flight key whose owner is gone (or any, with `force`) → released. */
  async releaseAbandonedKey(scope: string, key: string, force: boolean): Promise<boolean> {
    const rows = await this.run(RELEASE_ABANDONED_KEY, [scope, key, this.options.lockTimeoutSeconds, force]);
    return rows.length === 1;
  }

  async describeKey(scope: string, key: string): Promise<KeyDescription | undefined> {
    const [row] = await this.run<KeyDescription>(DESCRIBE_KEY, [scope, key, this.options.lockTimeoutSeconds]);
    return row;
  }

  /** The live claims of these operations, by operation id; an operation without a live key is absent. */
  async findOperationClaims(operationIds: readonly string[]): Promise<Map<string, ClaimState>> {
    const rows = await this.run<ClaimState>(FIND_OPERATION_CLAIMS, [operationIds, this.options.lockTimeoutSeconds]);
    return new Map(rows.map((row) => [row.operationId, row]));
  }

  /** Makes sure every day a key claimed now may expire on has its partition, TTL + a few days ahead. */
  createKeyPartitions(): Promise<number> {
    return createKeyPartitions(this.pool, this.options.ttlSeconds);
  }

  /** Drops the partitions of days wholly past: every key in them expired. */
  dropExpiredKeyPartitions(stopping?: AbortSignal): Promise<DroppedPartition[]> {
    return dropExpiredKeyPartitions(this.sessionUrl, stopping);
  }

  private async outcomeOfExisting(request: KeyRequest, row: KeyRow): Promise<ClaimOutcome> {
    if (row.requestHash !== request.fingerprint) return { kind: 'mismatch' };
    if (row.status === 'completed') return { kind: 'replay', response: storedResponseOf(row), expiresInSeconds: row.expiresInSeconds };
    if (row.status === 'in_flight' && !row.leaseExpired) return { kind: 'in_flight' };
    return this.takeOverKey(request);
  }

  private async takeOverKey(request: KeyRequest): Promise<ClaimOutcome> {
    const lockToken = randomUUID();
    const [taken] = await this.run<{ operationId: string }>(TAKE_OVER_KEY, [
      request.scope, request.key, this.options.lockTimeoutSeconds, request.fingerprint, lockToken,
    ]);
    if (!taken) return { kind: 'in_flight' };
    return { kind: 'claimed', claim: { ...request, lockToken, operationId: taken.operationId, resumed: true }, origin: 'takeover' };
  }

  /**
   * A claim whose expiry day has no partition fails with a check violation (23514); that only happens
   * when the purge job has not run for days, and creating the partitions then is the cure.
   */
  private async runClaim(parameters: readonly unknown[]): Promise<ClaimRow[]> {
    try {
      return await this.run<ClaimRow>(CLAIM_KEY, parameters);
    } catch (error) {
      if (sqlStateOf(error) !== SQLSTATE.checkViolation) throw error;
      await this.createKeyPartitions();
      return this.run<ClaimRow>(CLAIM_KEY, parameters);
    }
  }

  private run<Row>(sql: string, parameters: readonly unknown[]): Promise<Row[]> {
    return queryRows<Row>(this.pool, sql, parameters);
  }
}

/** True for the error of a completion whose claim was taken over meanwhile (see COMPLETE_KEY). */
export function isClaimLost(error: unknown): boolean {
  return sqlStateOf(error) === CLAIM_LOST_SQLSTATE;
}

function storedResponseOf(row: KeyRow): StoredResponse {
  return { status: row.responseStatus!, headers: row.responseHeaders ?? {}, body: row.responseBody! };
}
