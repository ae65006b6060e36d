import { createHash } from 'node:crypto';
import { SCHEMA } from './schema.js';
import type { IntentStatus } from './statuses.js';
import type { Queryable } from './transaction.js';

export type { IntentStatus } from './statuses.js';

/**
 * The statements on `payment_intents` and `charges`, and the PaymentIntent object shown to clients.
 * Every transition names its allowed starting statuses in its WHERE, so it holds even without the
 * row lock its callers take; zero rows back means the intent was not in one of them.
 */
export const CONFIRMABLE_STATUSES: readonly IntentStatus[] = ['requires_payment_method', 'requires_confirmation'];
export const CANCELABLE_STATUSES: readonly IntentStatus[] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];

export interface IntentRow {
  id: string;
  amount: string;
  currency: string;
  status: IntentStatus;
  payment_method: string | null;
  payment_method_types: string[];
  automatic_payment_methods: Record<string, unknown> | null;
  last_payment_error: Record<string, string> | null;
  metadata: Record<string, string>;
  description: string | null;
  latest_charge: string | null;
  canceled_at: Date | null;
  cancellation_reason: string | null;
  created: Date;
}

export interface NewIntent {
  id: string;
  amount: number;
  currency: string;
  status: IntentStatus;
  paymentMethod: string | null;
  paymentMethodTypes: string[];
  /** `{ enabled: true, allow_redirects? }` when the client let Stripe choose; null when it listed the types. */
  automaticPaymentMethods: Record<string, unknown> | null;
  metadata: Record<string, string>;
  description: string | null;
}

const INTENTS = `${SCHEMA}.payment_intents`;

export async function insertIntent(db: Queryable, intent: NewIntent): Promise<IntentRow> {
  const { rows } = await db.query(
    `INSERT INTO ${INTENTS} (id, amount, currency, status, payment_method, payment_method_types, automatic_payment_methods, metadata, description)
     VALUES ($1::text, $2::bigint, $3::text, $4::text, $5::text, $6::jsonb, $7::jsonb, $8::jsonb, $9::text) RETURNING *`,
    [
      intent.id,
      intent.amount,
      intent.currency,
      intent.status,
      intent.paymentMethod,
      JSON.stringify(intent.paymentMethodTypes),
      intent.automaticPaymentMethods && JSON.stringify(intent.automaticPaymentMethods),
      JSON.stringify(intent.metadata),
      intent.description,
    ],
  );
  return rows[0];
}

export async function findIntent(db: Queryable, id: string): Promise<IntentRow | undefined> {
  return (await db.query(`SELECT * FROM ${INTENTS} WHERE id = $1::text`, [id])).rows[0];
}

/** Holds the intent until COMMIT: a racing confirmation or cancellation (any instance) waits, then sees the outcome. */
export async function lockIntent(db: Queryable, id: string): Promise<IntentRow | undefined> {
  return (await db.query(`SELECT * FROM ${INTENTS} WHERE id = $1::text FOR UPDATE`, [id])).rows[0];
}

/**
 * `from` → requires_payment_method with the failure; the card is detached, as Stripe does. `from`:
 * confirmable (a decline), requires_action (failed authentication) or processing (settled as failed).
 */
export async function recordPaymentFailure(db: Queryable, id: string, lastPaymentError: Record<string, string>, from: readonly IntentStatus[]): Promise<IntentRow> {
  return transition(db, `status = 'requires_payment_method', payment_method = NULL, last_payment_error = $3::jsonb`, id, from, [JSON.stringify(lastPaymentError)]);
}

/** confirmable → requires_action or processing: the customer must authenticate, or the bank has not decided; nothing charged. */
export async function recordAwaiting(db: Queryable, id: string, status: 'requires_action' | 'processing', paymentMethod: string): Promise<IntentRow> {
  return transition(db, `status = $3::text, payment_method = $4::text, last_payment_error = NULL`, id, CONFIRMABLE_STATUSES, [status, paymentMethod]);
}

/** `from` → succeeded, pointing at the charge inserted in the same transaction. */
export async function recordSuccess(db: Queryable, id: string, paymentMethod: string, chargeId: string, from: readonly IntentStatus[]): Promise<IntentRow> {
  return transition(db, `status = 'succeeded', payment_method = $3::text, latest_charge = $4::text, last_payment_error = NULL`, id, from, [paymentMethod, chargeId]);
}

/** cancelable → canceled. */
export async function recordCancellation(db: Queryable, id: string, reason: string | null): Promise<IntentRow> {
  return transition(db, `status = 'canceled', canceled_at = now(), cancellation_reason = $3::text`, id, CANCELABLE_STATUSES, [reason]);
}

/** The one charge of an intent; the unique index on `payment_intent` refuses a second (23505). */
export async function insertCharge(db: Queryable, chargeId: string, intentId: string, amount: number, confirmedWith: string): Promise<void> {
  await db.query(`INSERT INTO ${SCHEMA}.charges (id, payment_intent, amount, confirmed_with) VALUES ($1::text, $2::text, $3::bigint, $4::text)`, [
    chargeId,
    intentId,
    amount,
    confirmedWith,
  ]);
}

async function transition(db: Queryable, assignments: string, id: string, from: readonly IntentStatus[], values: unknown[]): Promise<IntentRow> {
  const { rows } = await db.query(`UPDATE ${INTENTS} SET ${assignments} WHERE id = $1::text AND status = ANY($2::text[]) RETURNING *`, [id, from, ...values]);
  if (!rows[0]) throw new Error(`payment intent ${id} left ${from.join('/')} while locked`);
  return rows[0];
}

export function intentObject(row: IntentRow): Record<string, unknown> {
  const amount = Number(row.amount);
  return {
    id: row.id,
    object: 'payment_intent',
    amount,
    amount_received: row.status === 'succeeded' ? amount : 0,
    currency: row.currency,
    status: row.status,
    payment_method: row.payment_method,
    allowed_payment_method_types: row.automatic_payment_methods ? null : row.payment_method_types,
    automatic_payment_methods: row.automatic_payment_methods,
    payment_method_types: row.payment_method_types,
    last_payment_error: row.last_payment_error,
    next_action: row.status === 'requires_action' ? { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect' } } : null,
    metadata: row.metadata,
    latest_charge: row.latest_charge,
    canceled_at: row.canceled_at && unixSeconds(row.canceled_at),
    cancellation_reason: row.cancellation_reason,
    capture_method: 'automatic',
    confirmation_method: 'automatic',
    client_secret: clientSecretOf(row.id),
    created: unixSeconds(row.created),
    livemode: false,
    description: row.description,
  };
}

export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** Derived from the id, so every answer about one intent shows the same secret without storing it. */
function clientSecretOf(id: string): string {
  return `${id}_secret_${createHash('sha256').update(id).digest('base64url').replace(/[-_]/g, '').slice(0, 25)}`;
}
