import { newId } from './ids.js';
import type { IntentRow } from './payment-intent-rows.js';
import { intentObject } from './payment-intent-rows.js';
import { SCHEMA } from './schema.js';
import type { Queryable } from './transaction.js';

/**
 * Stripe's events, written in the transaction of the change they report: an event exists exactly
 * when its change committed. The body is fixed when written, so every delivery and every
 * `GET /v1/events/:id` shows the same bytes, and the object as the API showed it at that moment.
 */
export const API_VERSION = '2026-11-18.endive';

export type EventType =
  | 'payment_intent.requires_action'
  | 'payment_intent.processing'
  | 'payment_intent.succeeded'
  | 'payment_intent.payment_failed'
  | 'payment_intent.canceled'
  | 'refund.created'
  | 'refund.updated'
  | 'refund.failed'
  | 'charge.refund.updated';

/** The API request that caused a change, as its events name it. */
export interface EventOrigin {
  readonly idempotencyKey: string | null;
}

export const EVENTS = `${SCHEMA}.events`;

export async function recordEvent(db: Queryable, origin: EventOrigin, type: EventType, object: unknown, previousAttributes?: Record<string, unknown>): Promise<void> {
  // clock_timestamp(), not now(): the events of one transaction list in the order they were written.
  const { rows } = await db.query('SELECT clock_timestamp() AS at');
  const at: Date = rows[0].at;
  const event = {
    id: newId('evt'),
    object: 'event',
    api_version: API_VERSION,
    created: Math.floor(at.getTime() / 1000),
    data: previousAttributes ? { object, previous_attributes: previousAttributes } : { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: origin.idempotencyKey },
    type,
  };
  await db.query(`INSERT INTO ${EVENTS} (id, type, body, created) VALUES ($1::text, $2::text, $3::text, $4::timestamptz)`, [event.id, type, JSON.stringify(event), at]);
}

const INTENT_EVENT_TYPES: Partial<Record<IntentRow['status'], EventType>> = {
  requires_action: 'payment_intent.requires_action',
  processing: 'payment_intent.processing',
  succeeded: 'payment_intent.succeeded',
  // Only a failure returns an intent to requires_payment_method.
  requires_payment_method: 'payment_intent.payment_failed',
  canceled: 'payment_intent.canceled',
};

/** The event of the status an intent has just moved to. */
export async function recordIntentEvent(db: Queryable, origin: EventOrigin, row: IntentRow): Promise<void> {
  const type = INTENT_EVENT_TYPES[row.status];
  if (type === undefined) throw new Error(`no event for a payment intent moving to ${row.status}`);
  await recordEvent(db, origin, type, intentObject(row));
}
