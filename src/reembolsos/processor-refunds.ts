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

/**
 * The refund the processor made for this operation under any of its keys, if any: listed from the
 * intent's refunds. How an indeterminate refund is settled, and what every new key is checked against.
 */
export async function refundMadeFor(gateway: PaymentGateway, reembolso: Reembolso): Promise<Refund | undefined> {
  const refunds = await gateway.listRefunds(reembolso.gatewayChargeId);
  return refunds.find((refund) => refund.metadata[OPERATION_METADATA] === reembolso.operationId);
}
