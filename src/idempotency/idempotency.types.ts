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
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in_flight' };
