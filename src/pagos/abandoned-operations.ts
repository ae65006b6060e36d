import { Injectable, Logger } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, type Queryable, queryRows, type Transaction } from '../database/query-rows.js';
import { Transactions } from '../database/transactions.js';
import { isProcessorUnreachable } from '../gateway/payment-gateway.js';
import { IdempotencyStore, isClaimLost } from '../idempotency/idempotency.store.js';
import type { Claim, StoredResponse } from '../idempotency/idempotency.types.js';
import type { ReconcileResult } from './pagos.events.js';
import { devolverPendiente, reservarPendiente, type TablaConciliable } from './pending-versions.sql.js';

/** A PENDIENTE row as read, with the version (`actualizado_en`) every later write is conditional on. */
export interface PendingOperation<Item> {
  readonly item: Item;
  readonly id: string;
  readonly operationId: string;
  readonly version: string;
  readonly actualizadoEn: Date;
  /** What it is and whose, for an operator's list and the log. */
  readonly summary: string;
}

/** The row's final state, written; `answer` is what its key stores, none when the key is released (nothing done). */
export interface Settlement {
  readonly result: ReconcileResult;
  readonly answer: StoredResponse | undefined;
}

/** What `ask` answers when the processor has not decided yet (a payment still processing): left for the next pass. */
export const UNDECIDED = Symbol('undecided');

/**
 * One kind of operation that a client may abandon mid-flight (a payment, a refund): how to find its
 * stale rows, what the processor knows of it, and how to write its final state at a version.
 */
export interface AbandonedOperationKind<Item, Found> {
  readonly tabla: TablaConciliable;
  /** PENDIENTE rows untouched for `olderThanSeconds`, `limit` at a time in id order after `after`. */
  stale(olderThanSeconds: number, after: string, limit: number): Promise<Array<PendingOperation<Item>>>;
  /**
   * Asks the processor, and brings the operation to an end there when it can (an intent nobody will
   * confirm is canceled); throws when it can't be reached (nothing is written then).
   */
  ask(item: Item): Promise<Found | typeof UNDECIDED>;
  /**
   * True when the operation's key already holds the client's answer (a 202: the outcome comes later):
   * no claim is taken, the key keeps that answer, and the conditional writes alone decide. Default false.
   */
  keyAnswered?(item: Item): boolean;
  /** Writes the final state on `db` if the row is still PENDIENTE at `version`; undefined when another writer came first. */
  write(db: Transaction, pending: PendingOperation<Item>, version: string, found: Found): Promise<Settlement | undefined>;
  /** Reports a settlement (metrics). */
  report(result: ReconcileResult): void;
}

/** What one settlement attempt may find besides a result: a live attempt holds it, or somebody else settled or resumed it first. */
export type Attempt = ReconcileResult | 'held' | 'lost';

class ClaimLostError extends Error {}

/**
 * Settles one abandoned operation of any kind: reserves its row by version, takes the operation's
 * claim over (fenced like any takeover), asks the processor, and writes the final state together
 * with the key's answer — or releases the key when nothing was done. Every write is conditional, so
 * any number of replicas may run it at once (see pending-versions.sql.ts).
 */
@Injectable()
export class AbandonedOperations {
  private readonly logger = new Logger(AbandonedOperations.name);

  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly idempotency: IdempotencyStore,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async settle<Item, Found>(kind: AbandonedOperationKind<Item, Found>, pending: PendingOperation<Item>): Promise<Attempt> {
    const [reserved] = await queryRows<{ version: string }>(this.pool, reservarPendiente(kind.tabla), [pending.id, pending.version]);
    if (!reserved) return 'lost';
    const operation = kind.keyAnswered?.(pending.item) ? ({ kind: 'unclaimed' } as const) : await this.idempotency.takeOverStaleOperation(pending.operationId);
    if (operation.kind === 'held') {
      await this.leaveAsFound(kind, pending, reserved.version);
      return 'held';
    }
    const claim = operation.kind === 'taken' ? operation.claim : undefined;
    let found: Found | typeof UNDECIDED;
    try {
      found = await kind.ask(pending.item);
    } catch (error) {
      const unreachable = isProcessorUnreachable(error);
      const why = unreachable ? 'the processor could not be asked' : 'the processor answered what this pass cannot act on';
      this.logger.warn(`${pending.summary}: ${why} (${(error as Error).message}); next pass`);
      if (claim) await this.idempotency.releaseKey(claim);
      await this.leaveAsFound(kind, pending, reserved.version);
      return unreachable ? 'unreachable' : 'skipped';
    }
    if (found === UNDECIDED) {
      if (claim) await this.idempotency.releaseKey(claim);
      await this.leaveAsFound(kind, pending, reserved.version);
      return 'held';
    }
    const settled = await this.write(kind, pending, reserved.version, found, claim);
    if (!settled) return 'lost';
    this.logger.log(`${pending.summary} reconciled: ${settled.result} (operation ${pending.operationId})`);
    return settled.result;
  }

  /** Gives the reservation back, so that the next pass looks at the row again. */
  private async leaveAsFound(kind: AbandonedOperationKind<unknown, unknown>, pending: PendingOperation<unknown>, reserved: string): Promise<void> {
    await queryRows(this.pool, devolverPendiente(kind.tabla), [pending.id, reserved, pending.version]);
  }

  /** The final state and the key's settlement in one transaction; undefined when another writer came first. */
  private async write<Item, Found>(
    kind: AbandonedOperationKind<Item, Found>, pending: PendingOperation<Item>, version: string, found: Found, claim: Claim | undefined,
  ): Promise<Settlement | undefined> {
    try {
      const settled = await this.transactions.run(async (db) => {
        const settlement = await kind.write(db, pending, version, found);
        if (!settlement) return undefined;
        if (claim && !(await this.settleClaim(db, claim, settlement))) throw new ClaimLostError();
        return settlement;
      });
      // Somebody resumed or settled it first: the claim we took is theirs to decide again.
      if (!settled && claim) await this.idempotency.releaseKey(claim);
      return settled;
    } catch (error) {
      // The claim was taken from us meanwhile (we stalled past the lock timeout): its new owner decides.
      if (error instanceof ClaimLostError || isClaimLost(error)) return undefined;
      throw error;
    }
  }

  /**
   * Done: the key gets the route's answer (a lost claim makes completeKey abort the transaction).
   * Nothing done: the key is released, so a retry runs again; false when it was no longer ours.
   */
  private async settleClaim(db: Queryable, claim: Claim, settlement: Settlement): Promise<boolean> {
    if (!settlement.answer) return this.idempotency.releaseKey(claim, db);
    await this.idempotency.completeKey(db, claim, settlement.answer);
    return true;
  }
}
