import { EVENTS } from './events.js';
import { INSTANCE_ALIVE } from './instance-liveness.js';
import type { Queryable } from './transaction.js';

/**
 * The delivery state of events, one conditional statement per transition, judged by PostgreSQL's
 * clock. Glossary: an undelivered event is *claimed* by one instance for a *lease* (`leased_by`,
 * `lease_until`; `lease_until` as text is the lease token); the claimant then records it
 * *delivered*, *failed* (retried after a backoff), *dropped* (a fault: delivered without sending)
 * or *held* (a fault: waits until a later event is delivered). Every record is fenced on the lease.
 */

// Longer than a delivery can take (two POSTs of 10 s and a delayed send of at most 60 s); only an
// instance stuck while alive keeps its lease that long: a dead one's lease ends with its lock.
export const LEASE_SECONDS = 120;
// Stripe retries an undelivered event for up to three days.
export const RETRY_FOR_SECONDS = 3 * 24 * 60 * 60;

export interface ClaimedEvent {
  readonly id: string;
  readonly seq: string;
  readonly type: string;
  readonly body: string;
  readonly leaseToken: string;
}

/**
 * undelivered (due, not held, lease free or its instance gone) → leased by `instance`. The oldest
 * first; SKIP LOCKED lets instances claiming at once take different events, and the lease keeps
 * every other instance off this one until it is recorded. Zero rows: nothing is due.
 */
export async function claimNextEvent(db: Queryable, instance: number): Promise<ClaimedEvent | undefined> {
  const { rows } = await db.query(
    `UPDATE ${EVENTS} e SET leased_by = $1::int, lease_until = now() + make_interval(secs => $2::int)
      WHERE e.id = (
        SELECT c.id FROM ${EVENTS} c
         WHERE c.delivered_at IS NULL AND NOT c.held AND c.next_attempt_at <= now()
           AND c.created > now() - make_interval(secs => $3::int)
           AND (c.lease_until IS NULL OR c.lease_until < now() OR NOT ${INSTANCE_ALIVE('c.leased_by')})
         ORDER BY c.seq LIMIT 1
         FOR UPDATE SKIP LOCKED)
      RETURNING e.id, e.seq::text AS seq, e.type, e.body, e.lease_until::text AS lease_token`,
    [instance, LEASE_SECONDS, RETRY_FOR_SECONDS],
  );
  const row = rows[0];
  return row && { id: row.id, seq: row.seq, type: row.type, body: row.body, leaseToken: row.lease_token };
}

const OURS = 'id = $1::text AND leased_by = $2::int AND lease_until = $3::timestamptz';
const RELEASE = 'leased_by = NULL, lease_until = NULL';
// A delivered event keeps `leased_by`: the instance that delivered it.
const FINISH = 'lease_until = NULL';

function fence(event: ClaimedEvent, instance: number): unknown[] {
  return [event.id, instance, event.leaseToken];
}

/** leased → delivered, then releases the events held back for one after them (reorder). */
export async function recordDelivered(db: Queryable, event: ClaimedEvent, instance: number, status: number, posts: number): Promise<void> {
  await db.query(`UPDATE ${EVENTS} SET delivered_at = now(), attempts = attempts + $4::int, last_status = $5::int, last_error = NULL, ${FINISH} WHERE ${OURS}`, [
    ...fence(event, instance),
    posts,
    status,
  ]);
  await db.query(`UPDATE ${EVENTS} SET held = false, next_attempt_at = now() WHERE held AND seq < $1::bigint`, [event.seq]);
}

/** leased → undelivered, due again after `min(baseMs · 2^(attempts − 1), maxMs)`. */
export async function recordFailedAttempt(
  db: Queryable,
  event: ClaimedEvent,
  instance: number,
  failure: { status: number | null; error: string | null; posts: number },
  backoff: { baseMs: number; maxMs: number },
): Promise<void> {
  await db.query(
    `UPDATE ${EVENTS}
        SET attempts = attempts + $4::int, last_status = $5::int, last_error = $6::text, ${RELEASE},
            next_attempt_at = now() + make_interval(secs => least($7::float8 * power(2, least(attempts + $4::int - 1, 30)), $8::float8) / 1000)
      WHERE ${OURS}`,
    [...fence(event, instance), failure.posts, failure.status, failure.error, backoff.baseMs, backoff.maxMs],
  );
}

/** leased → delivered without a POST (the `drop` fault): attempts stay 0 when it was never sent. */
export async function recordDropped(db: Queryable, event: ClaimedEvent, instance: number): Promise<void> {
  await db.query(`UPDATE ${EVENTS} SET delivered_at = now(), ${FINISH} WHERE ${OURS}`, fence(event, instance));
}

/** leased → held (the `reorder` fault) until an event after it is delivered. */
export async function recordHeld(db: Queryable, event: ClaimedEvent, instance: number): Promise<void> {
  await db.query(`UPDATE ${EVENTS} SET held = true, ${RELEASE} WHERE ${OURS}`, fence(event, instance));
}

/** held → undelivered: clearing the faults lets a held event go. */
export async function releaseHeldEvents(db: Queryable): Promise<void> {
  await db.query(`UPDATE ${EVENTS} SET held = false, next_attempt_at = now() WHERE held`);
}

export interface DeliveryRecord {
  event_id: string;
  type: string;
  attempts: number;
  delivered_at: string | null;
  last_status: number | null;
}

/** Every event's delivery, oldest first (for `GET /_faults/webhook-deliveries`). */
export async function listDeliveries(db: Queryable): Promise<DeliveryRecord[]> {
  const { rows } = await db.query(
    `SELECT id AS event_id, type, attempts, to_char(delivered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS delivered_at, last_status
       FROM ${EVENTS} ORDER BY seq`,
  );
  return rows;
}
