export const PAYMENT_GATEWAY = Symbol('PAYMENT_GATEWAY');

export type ChargeOutcome = 'approved' | 'declined';

export interface ChargeRequest {
  /** Our idempotency key at the processor: the same key never charges twice. */
  readonly chargeKey: string;
  /** Minor units. */
  readonly amount: number;
  readonly currency: string;
  /** The payment method token from the client; never stored by us. */
  readonly paymentToken: string;
}

export interface Charge {
  readonly id: string;
  readonly chargeKey: string;
  readonly outcome: ChargeOutcome;
}

export interface RefundRequest {
  /** Our idempotency key at the processor: the same key never refunds twice. */
  readonly refundKey: string;
  /** The processor's id of the approved charge to give (part of) back. */
  readonly chargeId: string;
  /** Minor units; the refunds of a charge never add up to more than it charged. */
  readonly amount: number;
}

export interface Refund {
  readonly id: string;
  readonly refundKey: string;
  readonly chargeId: string;
  readonly amount: number;
}

/** A card processor. Implementations must deduplicate by `chargeKey` and `refundKey`, as real processors do. */
export interface PaymentGateway {
  /** Charges once per chargeKey: a repeated key answers the first charge. */
  charge(request: ChargeRequest): Promise<Charge>;
  /** The charge made under this key, if any: how a resumed operation learns it already charged. */
  findCharge(chargeKey: string): Promise<Charge | undefined>;
  /**
   * Refunds once per refundKey: a repeated key answers the first refund. Throws
   * {@link RefundRefusedError} when the charge can't give that much back (unknown, declined, or its
   * refunds would exceed it) and {@link GatewayUnavailableError} when it failed and refunded nothing.
   */
  refund(request: RefundRequest): Promise<Refund>;
  /** The refund made under this key, if any: how a resumed operation learns it already refunded. */
  findRefund(refundKey: string): Promise<Refund | undefined>;
}

/** The processor failed and says it charged nothing; the same chargeKey may be retried. */
export class GatewayUnavailableError extends Error {
  override readonly name = 'GatewayUnavailableError';
}

/** The processor refuses the refund for good (nothing refunded): retrying the same key gets the same answer. */
export class RefundRefusedError extends Error {
  override readonly name = 'RefundRefusedError';
}
