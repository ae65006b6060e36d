/**
 * Injected webhook faults, per instance and in memory like the API's (faults.ts). Each applies to
 * the next delivery of an event of its `type` (any type when absent), in the order added.
 *
 * - `drop`: mark the event delivered without sending it (as if Stripe never delivered it).
 * - `duplicate`: send it twice, the same body, each POST signed.
 * - `reorder`: hold it back until the event after it has been delivered.
 * - `delay`: wait `delayMs` before sending it (other events go on meanwhile).
 */
export const WEBHOOK_FAULT_KINDS = ['drop', 'duplicate', 'reorder', 'delay'] as const;
export type WebhookFaultKind = (typeof WEBHOOK_FAULT_KINDS)[number];

export interface WebhookFault {
  readonly fault: WebhookFaultKind;
  /** An event type such as `payment_intent.succeeded`; null matches every event. */
  readonly type: string | null;
  readonly delayMs: number;
}

export class WebhookFaultInjector {
  private pending: WebhookFault[] = [];

  add(fault: WebhookFault, times: number): void {
    for (let count = 0; count < times; count++) this.pending.push(fault);
  }

  /** The next fault for a delivery of an event of `type`, removed from the queue. */
  take(type: string): WebhookFault | undefined {
    const index = this.pending.findIndex((fault) => fault.type === null || fault.type === type);
    return index < 0 ? undefined : this.pending.splice(index, 1)[0];
  }

  list(): readonly WebhookFault[] {
    return [...this.pending];
  }

  clear(): void {
    this.pending = [];
  }
}
