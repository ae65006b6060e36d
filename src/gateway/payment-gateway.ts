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

/** A card processor. Implementations must deduplicate by `chargeKey`, as real processors do. */
export interface PaymentGateway {
  /** Charges once per chargeKey: a repeated key answers the first charge. */
  charge(request: ChargeRequest): Promise<Charge>;
  /** The charge made under this key, if any: how a resumed operation learns it already charged. */
  findCharge(chargeKey: string): Promise<Charge | undefined>;
}

/** The processor failed and says it charged nothing; the same chargeKey may be retried. */
export class GatewayUnavailableError extends Error {
  override readonly name = 'GatewayUnavailableError';
}
