/** What the app tells the webhooks module (it knows no feature). */
export interface WebhooksOptions {
  /** Every event type a feature declares: what `eventos` may name. */
  readonly eventTypes: readonly string[];
  /** Allow `http` URLs and internal hosts (local development, tests): `WEBHOOKS_ALLOW_INSECURE_URLS`. */
  readonly allowInsecureUrls: boolean;
  /** Endpoints one client may have at once (`WEBHOOKS_MAX_PER_CLIENT`); one more is a 409. */
  readonly maxPerClient: number;
}

export const WEBHOOKS_OPTIONS = Symbol('WEBHOOKS_OPTIONS');
