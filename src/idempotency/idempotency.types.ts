import type { KeyStatus } from './idempotency-key-record.entity.js';

/** The answer stored for a key and sent again on every replay. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The exact bytes sent the first time, as UTF-8 text. */
  readonly body: string;
}

export interface KeyRequest {
  readonly scope: string;
  readonly key: string;
  readonly fingerprint: string;
}

/** An owned claim: the holder of `lockToken` may complete or release it. */
export interface Claim extends KeyRequest {
  readonly lockToken: string;
  readonly operationId: string;
  /** True when a previous attempt of this operation may have done part of the work. */
  readonly resumed: boolean;
}

/** How a claim was won: a key never seen (or purged), an expired key reused, or a takeover. */
export type ClaimOrigin = 'new_key' | 'expired_key' | 'takeover';

export type ClaimOutcome =
  | { readonly kind: 'claimed'; readonly claim: Claim; readonly origin: ClaimOrigin }
  | { readonly kind: 'replay'; readonly response: StoredResponse; readonly expiresInSeconds: number }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in_flight' };

/** What settling an abandoned operation found: its claim, now ours; a live holder; or no live key at all. */
export type StaleOperationOutcome =
  | { readonly kind: 'taken'; readonly claim: Claim }
  | { readonly kind: 'held' }
  | { readonly kind: 'unclaimed' };

/** A key's claim as an operator sees it; ages in seconds by PostgreSQL's clock. */
export interface ClaimState {
  readonly scope: string;
  readonly key: string;
  readonly status: KeyStatus;
  readonly operationId: string;
  readonly expiresAt: Date;
  /** Seconds since the owner last renewed; null unless in_flight. */
  readonly leaseAgeSeconds: number | null;
  readonly leaseExpired: boolean | null;
}

export interface KeyDescription extends ClaimState {
  readonly expired: boolean;
  readonly createdAt: Date;
  readonly responseStatus: number | null;
  readonly responseBody: string | null;
}
