/** How events are delivered (WEBHOOK_* variables); see "The delivery contract" in docs/events-and-webhooks.md. */
export interface WebhookDeliveryOptions {
  /** pg-boss's connection (its own small pool, on the service's database). */
  readonly databaseUrl: string;
  /** Seconds to wait before each retry after the first attempt; the endpoint is disabled after the last fails. */
  readonly retryScheduleSeconds: readonly number[];
  readonly timeoutSeconds: number;
  readonly allowInsecureUrls: boolean;
  /** False in the operator's CLI: it enqueues (its settlements commit events) but delivers nothing. */
  readonly work: boolean;
}

export const WEBHOOK_DELIVERY_OPTIONS = Symbol('WEBHOOK_DELIVERY_OPTIONS');
