import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { sqlStateOf } from '../database/postgres-errors.js';
import { pgPoolOf, type Queryable, queryRows } from '../database/query-rows.js';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { CLAIM_KEY, CLAIM_LOST_SQLSTATE, COMPLETE_KEY, FIND_KEY, PURGE_EXPIRED_KEYS, RELEASE_KEY, RENEW_KEY, TAKE_OVER_KEY } from './idempotency.sql.js';
import type { Claim, ClaimOutcome, KeyRequest, StoredResponse } from './idempotency.types.js';
import type { KeyStatus } from './idempotency-key-record.entity.js';

interface KeyRow {
  readonly requestHash: string;
  readonly status: KeyStatus;
  readonly operationId: string;
  readonly responseStatus: number | null;
  readonly responseHeaders: Record<string, string> | null;
  readonly responseBody: string | null;
  readonly leaseExpired: boolean | null;
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
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async claimKey(request: KeyRequest): Promise<ClaimOutcome> {
    for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
      const lockToken = randomUUID();
      const [row] = await this.run<ClaimRow>(CLAIM_KEY, [
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

  async renewKey(claim: Claim): Promise<boolean> {
    const rows = await this.run(RENEW_KEY, [claim.scope, claim.key, claim.lockToken]);
    return rows.length === 1;
  }

  /**
   * Stores the answer in the caller's transaction. A lost claim rejects with an error that
   * {@link isClaimLost} recognises, and aborts that transaction: nothing of it is written.
   */
  async completeKey(db: Queryable, claim: Claim, response: StoredResponse): Promise<void> {
    await queryRows(db, COMPLETE_KEY, [claim.scope, claim.key, claim.lockToken, response.status, JSON.stringify(response.headers), response.body]);
  }

  async releaseKey(claim: Claim): Promise<void> {
    await this.run(RELEASE_KEY, [claim.scope, claim.key, claim.lockToken]);
  }

  /** Deletes one bounded batch of expired keys and says how many went. */
  async purgeExpiredKeys(batchSize = this.options.purgeBatchSize): Promise<number> {
    const rows = await this.run(PURGE_EXPIRED_KEYS, [batchSize]);
    return rows.length;
  }

  private async outcomeOfExisting(request: KeyRequest, row: KeyRow): Promise<ClaimOutcome> {
    if (row.requestHash !== request.fingerprint) return { kind: 'mismatch' };
    if (row.status === 'completed') return { kind: 'replay', response: storedResponseOf(row) };
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
