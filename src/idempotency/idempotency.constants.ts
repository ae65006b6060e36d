/**
 * Glossary of the idempotency mechanism (everything in this folder speaks these words):
 * - key: the client's `Idempotency-Key` value, one per intended operation, reused on each retry.
 * - scope: whose key it is (the authenticated client); the same value under two scopes is two keys.
 * - fingerprint: SHA-256 of method, path and canonical JSON body; a key must always carry the same one.
 * - claim: the row that reserves a key before the handler runs; an advisory lock on the key decides who
 *   wins (the table is partitioned by expiry day, so (scope, key) can't be a unique key).
 * - lease: how long a claim's owner may stay silent (`locked_at` + lock timeout) before a retry may
 *   take the claim over; a live owner renews it.
 * - lock token: a random UUID naming the current owner; every write of the owner is conditional on it.
 * - operation id: a UUID per claimed operation, kept across takeovers; the handler's own idempotency
 *   key downstream (for example the charge key given to a payment gateway).
 * - replay: sending the stored status, headers and body of a completed key again.
 * - outcome: what a claim attempt found (claimed, replay, mismatch, in flight).
 * - settled: a key whose claim ended, completed (answer stored) or released (free to take over).
 * - waiter: a duplicate that found its key in flight and waits (`Prefer: wait`) for it to settle.
 */

/** Route metadata set by `@Idempotent()`: its {@link IdempotentRouteOptions}. */
export const IDEMPOTENT_ROUTE = 'idempotency:route';

export interface IdempotentRouteOptions {
  /**
   * The key is claimed in one statement with the handler's first write (`Transactions.runFirst` given
   * the `@JoinableCommit()`), which PostgreSQL runs only if the claim wins: one round trip for both.
   * That write must be a `SELECT` of a function (see `gatedStatement`). The handler starts before the
   * claim is known, and everything it does before that write is done by every duplicate and replay
   * too, then discarded: it must do nothing else first (no other write, no call to another service),
   * and must not swallow the error of that write (a `GateClosedError` when the claim was lost).
   */
  readonly claimWithFirstWrite?: boolean;
}
export const IDEMPOTENCY_OPTIONS = Symbol('IDEMPOTENCY_OPTIONS');

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

// As Stripe; long enough for a UUID or a ULID with a prefix, short enough for an index.
export const MAX_KEY_LENGTH = 255;

// Three renewals fit in one lease (lock timeout), so a single slow or failed renewal does not lose the claim;
// an owner silent for longer than two renewal intervals has stopped (killed or hung).
export const RENEWALS_PER_LEASE = 3;

// An in-flight duplicate should come back soon: most handlers finish within a second.
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/** Where PostgreSQL announces settled keys (the trigger of migration 1764700012000). */
export const KEY_SETTLED_CHANNEL = 'idempotency_key_settled';

/** Response headers worth replaying; the rest (Date, ETag, ...) is regenerated per response. */
export const REPLAYED_RESPONSE_HEADERS = ['content-type', 'location'] as const;
