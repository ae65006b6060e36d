import { unixSeconds } from './payment-intent-rows.js';
import { SCHEMA } from './schema.js';
import type { RefundStatus } from './statuses.js';
import type { Queryable } from './transaction.js';

/** The statements on `refunds` and on a charge's refunded amount, and the Refund object shown to clients. */
export interface RefundRow {
  id: string;
  payment_intent: string;
  charge: string;
  amount: string;
  currency: string;
  status: RefundStatus;
  failure_reason: string | null;
  metadata: Record<string, string>;
  reason: string | null;
  created: Date;
}

export interface LockedCharge {
  readonly id: string;
  readonly amount: number;
  readonly amountRefunded: number;
  /** The payment method as the client named it when confirming (null on charges older than the column). */
  readonly confirmedWith: string | null;
}

export interface NewRefund {
  id: string;
  paymentIntent: string;
  charge: string;
  amount: number;
  currency: string;
  status: 'pending' | 'succeeded';
  metadata: Record<string, string>;
  reason: string | null;
}

export const REFUNDS = `${SCHEMA}.refunds`;

/** Holds the charge until COMMIT: refunds racing for what is left of it (any instance) take turns. */
export async function lockCharge(db: Queryable, id: string): Promise<LockedCharge> {
  const { rows } = await db.query(`SELECT id, amount, amount_refunded, confirmed_with FROM ${SCHEMA}.charges WHERE id = $1::text FOR UPDATE`, [id]);
  if (!rows[0]) throw new Error(`charge ${id} of a succeeded payment intent is missing`);
  return { id: rows[0].id, amount: Number(rows[0].amount), amountRefunded: Number(rows[0].amount_refunded), confirmedWith: rows[0].confirmed_with };
}

/**
 * Adds a refund to its charge only while the total stays within the charge (besides the lock, the
 * WHERE and the table's CHECK each refuse an excess). Zero rows: the charge had less left than assumed.
 */
export async function addRefundedAmount(db: Queryable, chargeId: string, amount: number): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE ${SCHEMA}.charges SET amount_refunded = amount_refunded + $2::bigint WHERE id = $1::text AND amount_refunded + $2::bigint <= amount`,
    [chargeId, amount],
  );
  if (rowCount !== 1) throw new Error(`charge ${chargeId} has less than ${amount} left to refund`);
}

/** A failed refund gives its amount back: the charge may be refunded again up to its amount. */
export async function returnRefundedAmount(db: Queryable, chargeId: string, amount: number): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE ${SCHEMA}.charges SET amount_refunded = amount_refunded - $2::bigint WHERE id = $1::text AND amount_refunded >= $2::bigint`,
    [chargeId, amount],
  );
  if (rowCount !== 1) throw new Error(`charge ${chargeId} has less than ${amount} refunded to give back`);
}

export async function insertRefund(db: Queryable, refund: NewRefund): Promise<RefundRow> {
  const { rows } = await db.query(
    `INSERT INTO ${REFUNDS} (id, payment_intent, charge, amount, currency, status, metadata, reason)
     VALUES ($1::text, $2::text, $3::text, $4::bigint, $5::text, $6::text, $7::jsonb, $8::text) RETURNING *`,
    [refund.id, refund.paymentIntent, refund.charge, refund.amount, refund.currency, refund.status, JSON.stringify(refund.metadata), refund.reason],
  );
  return rows[0];
}

/** Holds the refund until COMMIT: two settlements of one refund take turns and the second sees the first's status. */
export async function lockRefund(db: Queryable, id: string): Promise<RefundRow | undefined> {
  return (await db.query(`SELECT * FROM ${REFUNDS} WHERE id = $1::text FOR UPDATE`, [id])).rows[0];
}

/** `from` → `to` (failure_reason set only for failed). Zero rows: the refund left `from` while locked, a bug. */
export async function recordRefundStatus(db: Queryable, id: string, from: RefundStatus, to: RefundStatus, failureReason: string | null): Promise<RefundRow> {
  const { rows } = await db.query(`UPDATE ${REFUNDS} SET status = $3::text, failure_reason = $4::text WHERE id = $1::text AND status = $2::text RETURNING *`, [
    id,
    from,
    to,
    failureReason,
  ]);
  if (!rows[0]) throw new Error(`refund ${id} left ${from} while locked`);
  return rows[0];
}

export async function findRefund(db: Queryable, id: string): Promise<RefundRow | undefined> {
  return (await db.query(`SELECT * FROM ${REFUNDS} WHERE id = $1::text`, [id])).rows[0];
}

export function refundObject(row: RefundRow): Record<string, unknown> {
  return {
    id: row.id,
    object: 'refund',
    amount: Number(row.amount),
    currency: row.currency,
    payment_intent: row.payment_intent,
    charge: row.charge,
    status: row.status,
    failure_reason: row.failure_reason,
    metadata: row.metadata,
    reason: row.reason,
    created: unixSeconds(row.created),
  };
}
