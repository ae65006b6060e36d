import type { PaymentGateway, Refund } from '../gateway/payment-gateway.js';
import { type Reembolso, refundKeyOf } from './reembolso.entity.js';

/** Refunds the processor makes for an operation say which in their metadata: the only way to find one again. */
const OPERATION_METADATA = 'operation_id';

/** Asks the processor for the refund, under the operation's current key. */
export function requestRefund(gateway: PaymentGateway, reembolso: Reembolso): Promise<Refund> {
  return gateway.refund({
    key: refundKeyOf(reembolso.operationId, reembolso.intentoProcesador),
    intentId: reembolso.gatewayChargeId,
    amount: reembolso.monto,
    metadata: { reembolso_id: reembolso.id, [OPERATION_METADATA]: reembolso.operationId },
  });
}

/** Pending or succeeded: money given back, or on its way. A failed or canceled refund gave nothing back. */
export function isLive(refund: Refund): boolean {
  return refund.status === 'pending' || refund.status === 'succeeded';
}

/**
 * The live refund the processor made for this operation under any of its keys, if any: listed from
 * the intent's refunds. How an indeterminate refund is settled, and what every new key is checked
 * against. A failed one counts as none: an earlier attempt's failure must not decide a later attempt
 * (its key moved on), and when it is this attempt's, the refund gave nothing back all the same.
 */
export async function refundMadeFor(gateway: PaymentGateway, reembolso: Reembolso): Promise<Refund | undefined> {
  const refunds = await gateway.listRefunds(reembolso.gatewayChargeId);
  return refunds.find((refund) => refund.metadata[OPERATION_METADATA] === reembolso.operationId && isLive(refund));
}
