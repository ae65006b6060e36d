import { Injectable } from '@nestjs/common';

/**
 * How refunds end, whoever settled them (the route or the reconciler):
 * - approved: the processor refunded it. failed: the processor refunded nothing (FALLIDO, amount given back).
 * - pending: the processor accepted it and decides later (the route's 202; a webhook or the reconciler settles it).
 * - exceeds_payment / not_refundable: refused before the processor was asked (409).
 */
export const REFUND_RESULTS = ['approved', 'pending', 'failed', 'exceeds_payment', 'not_refundable'] as const;
export type RefundResult = (typeof REFUND_RESULTS)[number];

/** Where the refunds feature reports what it did, so that metrics can count it without `reembolsos/` knowing about them. */
@Injectable()
export class ReembolsosEvents {
  private readonly listeners: Array<(result: RefundResult) => void> = [];

  onRefund(listener: (result: RefundResult) => void): void {
    this.listeners.push(listener);
  }

  refund(result: RefundResult): void {
    for (const listener of this.listeners) listener(result);
  }
}
