/** A client's webhook endpoint as the statements return it (never its secret). */
export interface WebhookEndpoint {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: string[];
  readonly createdAt: Date;
  readonly disabledAt: Date | null;
}
