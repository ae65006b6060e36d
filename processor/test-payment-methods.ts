/**
 * The processor's test values: what confirming with a given payment method does, after Stripe's
 * own test cards (https://docs.stripe.com/testing). Any other `pm_…` or `tok_…` succeeds; anything
 * else is an unknown PaymentMethod.
 */
export type ConfirmationOutcome =
  | { readonly kind: 'declined'; readonly declineCode: 'generic_decline' | 'insufficient_funds' }
  | { readonly kind: 'processing_error' }
  | { readonly kind: 'requires_action' }
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'unknown_payment_method' };

const GENERIC_DECLINE = { kind: 'declined', declineCode: 'generic_decline' } as const;
const INSUFFICIENT_FUNDS = { kind: 'declined', declineCode: 'insufficient_funds' } as const;
const PROCESSING_ERROR = { kind: 'processing_error' } as const;
const REQUIRES_ACTION = { kind: 'requires_action' } as const;

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
};

/** A refund of exactly this many minor units fails as a processor error that refunded nothing (500). */
export const FAILING_REFUND_AMOUNT = 13;

export function outcomeOfConfirming(paymentMethod: string): ConfirmationOutcome {
  if (Object.hasOwn(TEST_PAYMENT_METHODS, paymentMethod)) return TEST_PAYMENT_METHODS[paymentMethod]!;
  if (paymentMethod.startsWith('pm_') || paymentMethod.startsWith('tok_')) return { kind: 'succeeded' };
  return { kind: 'unknown_payment_method' };
}
