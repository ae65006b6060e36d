/**
 * The processor's test values: what confirming with a given payment method does, after Stripe's
 * own test cards (https://docs.stripe.com/testing). Any other `pm_…` or `tok_…` succeeds; anything
 * else is an unknown PaymentMethod. `processing`, `refundPending` and `refundFail` are local-only
 * values (Stripe reaches those states with cards of other countries or real time).
 */
export type ConfirmationOutcome =
  | { readonly kind: 'declined'; readonly declineCode: 'generic_decline' | 'insufficient_funds' }
  | { readonly kind: 'processing_error' }
  | { readonly kind: 'requires_action' }
  | { readonly kind: 'processing' }
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'unknown_payment_method' };

const GENERIC_DECLINE = { kind: 'declined', declineCode: 'generic_decline' } as const;
const INSUFFICIENT_FUNDS = { kind: 'declined', declineCode: 'insufficient_funds' } as const;
const PROCESSING_ERROR = { kind: 'processing_error' } as const;
const REQUIRES_ACTION = { kind: 'requires_action' } as const;
const PROCESSING = { kind: 'processing' } as const;

export const TEST_PAYMENT_METHODS: Readonly<Record<string, ConfirmationOutcome>> = {
  tok_decline: GENERIC_DECLINE,
  tok_chargeDeclined: GENERIC_DECLINE,
  pm_card_chargeDeclined: GENERIC_DECLINE,
  pm_card_visa_chargeDeclined: GENERIC_DECLINE,
  tok_chargeDeclinedInsufficientFunds: INSUFFICIENT_FUNDS,
  pm_card_chargeDeclinedInsufficientFunds: INSUFFICIENT_FUNDS,
  // A failure at the processor that charged nothing.
  tok_error: PROCESSING_ERROR,
  tok_chargeDeclinedProcessingError: PROCESSING_ERROR,
  pm_card_chargeDeclinedProcessingError: PROCESSING_ERROR,
  // 3-D Secure: the customer must authenticate before anything is charged.
  pm_card_authenticationRequired: REQUIRES_ACTION,
  tok_authenticationRequired: REQUIRES_ACTION,
  pm_card_threeDSecureRequired: REQUIRES_ACTION,
  tok_threeDSecureRequired: REQUIRES_ACTION,
  pm_card_threeDSecure2Required: REQUIRES_ACTION,
  tok_threeDSecure2Required: REQUIRES_ACTION,
  // The bank decides later: POST /v1/test_helpers/payment_intents/:id/settle.
  pm_card_processing: PROCESSING,
  tok_processing: PROCESSING,
};

/** How a refund of a charge starts, by the payment method the charge was made with. */
export type RefundStart = 'succeeded' | 'pending' | 'succeeded_then_fails';

const REFUND_STARTS: Readonly<Record<string, RefundStart>> = {
  pm_card_refundPending: 'pending',
  tok_refundPending: 'pending',
  pm_card_refundFail: 'succeeded_then_fails',
  tok_refundFail: 'succeeded_then_fails',
};

/** `chargedWith` is null for charges made before the processor remembered it. */
export function refundStartOf(chargedWith: string | null): RefundStart {
  return chargedWith !== null && Object.hasOwn(REFUND_STARTS, chargedWith) ? REFUND_STARTS[chargedWith]! : 'succeeded';
}

/** A refund of exactly this many minor units fails as a processor error that refunded nothing (500). */
export const FAILING_REFUND_AMOUNT = 13;

export function outcomeOfConfirming(paymentMethod: string): ConfirmationOutcome {
  if (Object.hasOwn(TEST_PAYMENT_METHODS, paymentMethod)) return TEST_PAYMENT_METHODS[paymentMethod]!;
  if (paymentMethod.startsWith('pm_') || paymentMethod.startsWith('tok_')) return { kind: 'succeeded' };
  return { kind: 'unknown_payment_method' };
}
