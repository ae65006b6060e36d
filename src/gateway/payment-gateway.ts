export const PAYMENT_GATEWAY = Symbol('PAYMENT_GATEWAY');

/**
 * Where a payment intent stands at the processor, in the terms that decide our state:
 * - `succeeded`: money moved (once: an intent charges at most once, whatever the keys).
 * - `declined`: the card was declined, its authentication failed, or its token was spent; nothing charged, final.
 * - `failed`: the processor failed without charging (a processing error); it may be confirmed again.
 * - `confirmable`: nothing charged yet; waiting for a confirmation (ours never arrived, or was refused before any work).
 * - `requires_action`: the customer must authenticate (3-D Secure); nothing charged.
 * - `processing`: the processor has not decided yet.
 * - `canceled`: nothing charged, and it never will be.
 */
export type IntentStatus = 'succeeded' | 'declined' | 'failed' | 'confirmable' | 'requires_action' | 'processing' | 'canceled';

/** Why a `declined` intent was declined. */
export type DeclineReason = 'card' | 'authentication' | 'spent_token';

export interface IntentState {
  readonly id: string;
  readonly status: IntentStatus;
  /** Only when `declined`. */
  readonly declinedFor?: DeclineReason;
  /** Only when `requires_action`: what the customer's app hands to the processor's SDK to authenticate. */
  readonly clientSecret?: string;
}

export interface CreateIntentRequest {
  /** Our idempotency key at the processor: the same key with the same parameters returns the same intent. */
  readonly key: string;
  /** Minor units. */
  readonly amount: number;
  /** Upper-case ISO 4217. */
  readonly currency: string;
  /** Ours alone (ids), so that the creation can be resent without anything the client gave. */
  readonly metadata: Readonly<Record<string, string>>;
}

export interface ConfirmIntentRequest {
  readonly key: string;
  readonly intentId: string;
  /** The payment method from the client's SDK (`pm_…` or a legacy `tok_…`); never stored by us. */
  readonly paymentToken: string;
}

/**
 * Where a refund stands at the processor. `pending`: not decided yet (the bank answers later);
 * `succeeded`: money given back, though it may still fail later (an asynchronous refund failure);
 * `failed` / `canceled`: nothing given back, final.
 */
export type RefundStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

export interface Refund {
  readonly id: string;
  readonly status: RefundStatus;
  readonly intentId: string;
  readonly amount: number;
  readonly metadata: Readonly<Record<string, string>>;
}

export interface RefundRequest {
  readonly key: string;
  /** The succeeded intent to give (part of) back. */
  readonly intentId: string;
  /** Minor units. */
  readonly amount: number;
  readonly metadata: Readonly<Record<string, string>>;
}

/**
 * A card processor that offers what Stripe offers, and nothing more: every write deduplicated by the
 * idempotency key we give it, objects retrieved by their own id, refunds listed by intent. Nothing
 * is looked up by our keys. Every method throws {@link GatewayIndeterminateError} when the outcome is
 * unknown (no answer, or an answer that says nothing of what was done).
 */
export interface PaymentGateway {
  /** Creates an intent that carries no payment method yet, so it can move no money; {@link AmountRefusedError} when its amount can't be paid. */
  createIntent(request: CreateIntentRequest): Promise<IntentState>;
  /** Confirms (charges) it: a decline or a processing failure is a state, not an error. */
  confirmIntent(request: ConfirmIntentRequest): Promise<IntentState>;
  retrieveIntent(intentId: string): Promise<IntentState>;
  /**
   * Cancels an intent that has not charged. When it has moved on meanwhile (a confirmation still in
   * flight won), the answer is what it became.
   */
  cancelIntent(intentId: string, key: string): Promise<IntentState>;
  /** Throws {@link RefundRefusedError} when the processor refuses it for good (nothing refunded). */
  refund(request: RefundRequest): Promise<Refund>;
  /** Every refund of the intent: how an indeterminate refund is settled (by its metadata). */
  listRefunds(intentId: string): Promise<Refund[]>;
  /** The refund as it is now (a pending one that settled, a succeeded one that failed later). */
  retrieveRefund(refundId: string): Promise<Refund>;
}

/**
 * The outcome is unknown: no answer (timeout, connection refused or reset), a rate limit, a key
 * still in use, or a 5xx. `replaysFailure`: the processor answered a failure that it keeps under the
 * key (a 5xx to a write under our key), so resending that key can only replay it; anything else,
 * a read's 5xx included, may be asked again.
 */
export class GatewayIndeterminateError extends Error {
  override readonly name = 'GatewayIndeterminateError';

  constructor(
    message: string,
    readonly replaysFailure: boolean,
  ) {
    super(message);
  }
}

/**
 * The processor refuses the payment's amount or currency for good (below its minimum, above its
 * maximum, a currency it does not take): nothing was created or charged. The message says which.
 */
export class AmountRefusedError extends Error {
  override readonly name = 'AmountRefusedError';
}

/**
 * No answer at all (a timeout, a refused connection, a rate limit, a read's 5xx): anything else asked
 * of the processor now would wait on it too. Any other error is about the one request: a 5xx it keeps
 * under that request's key, a 404 for an object it doesn't know.
 */
export function isProcessorUnreachable(error: unknown): boolean {
  return error instanceof GatewayIndeterminateError && !error.replaysFailure;
}

/** The processor refuses the refund for good (nothing refunded): retrying the same key gets the same answer. */
export class RefundRefusedError extends Error {
  override readonly name = 'RefundRefusedError';
}
