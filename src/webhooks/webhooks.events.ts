import { Injectable } from '@nestjs/common';

/**
 * What one delivery attempt got: delivered (a 2xx), failed (any other status, a timeout, no
 * connection; retried on the schedule), or disabled (the last attempt of the schedule failed).
 */
export const DELIVERY_RESULTS = ['delivered', 'failed', 'disabled'] as const;
export type DeliveryResult = (typeof DELIVERY_RESULTS)[number];

/** Where delivery reports, so that metrics count it without `webhooks/` knowing about them. */
@Injectable()
export class WebhooksEvents {
  private readonly attemptListeners: Array<(result: DeliveryResult) => void> = [];
  private readonly deliveredListeners: Array<(secondsSinceEvent: number) => void> = [];

  onAttempt(listener: (result: DeliveryResult) => void): void {
    this.attemptListeners.push(listener);
  }

  /** The first 2xx of a delivery, with the time since its event was written. */
  onDelivered(listener: (secondsSinceEvent: number) => void): void {
    this.deliveredListeners.push(listener);
  }

  attempt(result: DeliveryResult): void {
    for (const listener of this.attemptListeners) listener(result);
  }

  delivered(secondsSinceEvent: number): void {
    for (const listener of this.deliveredListeners) listener(secondsSinceEvent);
  }
}
