import { createHash } from 'node:crypto';
import type { Answer } from './answers.js';
import { SCHEMA } from './schema.js';
import { INSTANCE_ALIVE } from './instance-liveness.js';
import type { Queryable } from './transaction.js';

/**
 * The states of an idempotency key, as Stripe keeps them, one conditional statement per transition.
 *
 * Glossary: a key is *claimed* (row inserted `in_flight`, `locked_at = now()`) by the request that
 * will execute; `locked_at` as text is its *lock token*; the claim is *completed* with the stored
 * answer in the same transaction as the business write, fenced on the token; it is *released*
 * (row deleted) when the request was refused before doing anything; an `in_flight` row is *stale*,
 * and may be *taken over*, when the instance that claimed it is gone (see instance-liveness.ts) or
 * its `locked_at` is older than STALE_CLAIM_SECONDS (an instance alive but stuck).
 */

// Longer than any request takes here (lock_timeout 5 s, statement_timeout 15 s, plus injected
// latency in tests), so only a crashed or stalled instance's claim goes stale.
export const STALE_CLAIM_SECONDS = 60;

export interface Lease {
  readonly key: string;
  readonly lockToken: string;
}

/** Whether claim row `k` can be taken over ($2 = STALE_CLAIM_SECONDS). */
const STALE = `(NOT ${INSTANCE_ALIVE('k.instance')} OR k.locked_at < now() - make_interval(secs => $2::int))`;

export type ExistingKey =
  | { readonly state: 'completed'; readonly requestHash: string; readonly answer: Answer }
  | { readonly state: 'in_flight'; readonly requestHash: string; readonly stale: boolean }
  | { readonly state: 'absent' };

/** Method, path and parsed parameters, canonical (object keys sorted) so their order does not matter. */
export function requestHash(method: string, path: string, params: unknown): string {
  return createHash('sha256').update(canonicalJson({ method, path, params })).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * absent → in_flight. Two requests with one key race on the primary key: exactly one gets a row
 * back. Zero rows: the key exists; look at it with `findKey`.
 */
export async function claimKey(db: Queryable, key: string, hash: string, instance: number): Promise<Lease | undefined> {
  const { rows } = await db.query(
    `INSERT INTO ${SCHEMA}.idempotency_keys (key, request_hash, status, locked_at, instance) VALUES ($1::text, $2::text, 'in_flight', now(), $3::int)
     ON CONFLICT (key) DO NOTHING
     RETURNING locked_at::text AS lock_token`,
    [key, hash, instance],
  );
  return rows[0] ? { key, lockToken: rows[0].lock_token } : undefined;
}

/** Reads a key that `claimKey` found taken. Staleness is judged by PostgreSQL's clock. */
export async function findKey(db: Queryable, key: string): Promise<ExistingKey> {
  const { rows } = await db.query(
    `SELECT status, request_hash, response_status, response_body, ${STALE} AS stale
       FROM ${SCHEMA}.idempotency_keys k WHERE key = $1::text`,
    [key, STALE_CLAIM_SECONDS],
  );
  const row = rows[0];
  if (!row) return { state: 'absent' };
  if (row.status === 'completed') {
    return { state: 'completed', requestHash: row.request_hash, answer: { status: row.response_status, body: row.response_body } };
  }
  return { state: 'in_flight', requestHash: row.request_hash, stale: row.stale };
}

/**
 * in_flight (stale) → in_flight (ours). Two instances finding one stale claim both try: the WHERE
 * re-checks staleness on the row they queue for, so the second sees the first's fresh `locked_at`
 * and live instance and gets zero rows (someone else holds it now).
 */
export async function takeOverStaleKey(db: Queryable, key: string, hash: string, instance: number): Promise<Lease | undefined> {
  const { rows } = await db.query(
    `UPDATE ${SCHEMA}.idempotency_keys k SET locked_at = now(), instance = $4::int
      WHERE key = $1::text AND request_hash = $3::text AND status = 'in_flight' AND ${STALE}
      RETURNING locked_at::text AS lock_token`,
    [key, STALE_CLAIM_SECONDS, hash, instance],
  );
  return rows[0] ? { key, lockToken: rows[0].lock_token } : undefined;
}

/**
 * in_flight (ours) → completed, run in the transaction of the business write so both commit or
 * neither does. Fenced on the lock token: an instance that stalled past a takeover gets zero rows
 * and must roll its work back.
 */
export async function completeKey(db: Queryable, lease: Lease, stored: Answer): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE ${SCHEMA}.idempotency_keys SET status = 'completed', response_status = $3::int, response_body = $4::text
      WHERE key = $1::text AND locked_at = $2::timestamptz AND status = 'in_flight'`,
    [lease.key, lease.lockToken, stored.status, stored.body],
  );
  return rowCount === 1;
}

/**
 * in_flight (ours) → absent: the request was refused before changing anything, so the key may be
 * used again. Fenced like `completeKey`: zero rows means another instance took the key over.
 */
export async function releaseKey(db: Queryable, lease: Lease): Promise<void> {
  await db.query(`DELETE FROM ${SCHEMA}.idempotency_keys WHERE key = $1::text AND locked_at = $2::timestamptz AND status = 'in_flight'`, [
    lease.key,
    lease.lockToken,
  ]);
}
