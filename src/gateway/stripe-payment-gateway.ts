import Stripe from 'stripe';
import {
  AmountRefusedError, type ConfirmIntentRequest, type CreateIntentRequest, type DeclineReason, GatewayIndeterminateError, type IntentState, type IntentStatus, type PaymentGateway,
  type Refund, RefundRefusedError, type RefundRequest, type RefundStatus,
} from './payment-gateway.js';

export interface StripeConnection {
  readonly secretKey: string;
  /** Stripe's own API, or a Stripe-compatible server (the local processor). */
  readonly apiUrl: URL;
  readonly timeoutMs: number;
  /** The SDK's own retries of one call, always with the same idempotency key. */
  readonly maxNetworkRetries: number;
}

const REFUNDS_PAGE = 100;
// What `call` is told for a write under our idempotency key.
const KEYED = true;
// A processing error charged nothing; every other payment error is the card's answer.
const PROCESSING_ERROR = 'processing_error';
// The customer failed 3-D Secure: the intent is back to requires_payment_method with this code.
const AUTHENTICATION_FAILURE = 'payment_intent_authentication_failure';
// A single-use card token confirmed before (by any intent).
const TOKEN_ALREADY_USED = 'token_already_used';
// What Stripe answers for an amount or currency it can't take (its codes, or the param it names).
const AMOUNT_REFUSALS = new Set(['amount_too_small', 'amount_too_large']);
const AMOUNT_PARAMS = new Set(['amount', 'currency']);

/**
 * The payment gateway on Stripe's PaymentIntents and Refunds, through the official SDK. It uses only
 * create, confirm, retrieve and cancel of intents and create, list and retrieve of refunds, so Stripe itself
 * and any Stripe-compatible server work. Every write carries the caller's idempotency key.
 */
export class StripePaymentGateway implements PaymentGateway {
  private readonly stripe: Stripe;

  constructor(connection: StripeConnection) {
    const { apiUrl } = connection;
    this.stripe = new Stripe(connection.secretKey, {
      host: apiUrl.hostname,
      port: apiUrl.port || (apiUrl.protocol === 'http:' ? 80 : 443),
      protocol: apiUrl.protocol === 'http:' ? 'http' : 'https',
      timeout: connection.timeoutMs,
      maxNetworkRetries: connection.maxNetworkRetries,
      telemetry: false,
      appInfo: { name: 'pagos' },
    });
  }

  async createIntent({ key, amount, currency, metadata }: CreateIntentRequest): Promise<IntentState> {
    const intent = await this.callRefusingAmounts(() =>
      this.stripe.paymentIntents.create(
        // Cards confirmed on the server: no redirect, so no return_url.
        {
          amount,
          currency: currency.toLowerCase(),
          automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
          metadata: { ...metadata },
        },
        { idempotencyKey: key },
      ),
    );
    return stateOf(intent);
  }

  async confirmIntent({ key, intentId, paymentToken }: ConfirmIntentRequest): Promise<IntentState> {
    try {
      const intent = await this.call(() => this.stripe.paymentIntents.confirm(intentId, paymentMethodOf(paymentToken), { idempotencyKey: key }), KEYED);
      return stateOf(intent);
    } catch (error) {
      const answered = this.intentInError(error, intentId);
      if (answered) return answered;
      if (!(error instanceof Stripe.errors.StripeInvalidRequestError)) throw error;
      // A spent single-use token, or one that names no payment method the processor knows: nothing was charged, and never will be with it.
      if (error.code === TOKEN_ALREADY_USED) return { id: intentId, status: 'declined', declinedFor: 'spent_token' };
      if (error.param === 'payment_method') return { id: intentId, status: 'declined', declinedFor: 'card' };
      throw error;
    }
  }

  async retrieveIntent(intentId: string): Promise<IntentState> {
    return stateOf(await this.call(() => this.stripe.paymentIntents.retrieve(intentId)));
  }

  async cancelIntent(intentId: string, key: string): Promise<IntentState> {
    try {
      return stateOf(await this.call(() => this.stripe.paymentIntents.cancel(intentId, {}, { idempotencyKey: key }), KEYED));
    } catch (error) {
      const answered = this.intentInError(error, intentId);
      if (answered) return answered;
      throw error;
    }
  }

  async refund({ key, intentId, amount, metadata }: RefundRequest): Promise<Refund> {
    try {
      const refund = await this.call(
        () => this.stripe.refunds.create({ payment_intent: intentId, amount, metadata: { ...metadata } }, { idempotencyKey: key }),
        KEYED,
      );
      return refundOf(refund);
    } catch (error) {
      // Too much, nothing left, not refundable, unknown intent: refused before anything moved.
      if (error instanceof Stripe.errors.StripeInvalidRequestError) throw new RefundRefusedError(error.message);
      throw error;
    }
  }

  async listRefunds(intentId: string): Promise<Refund[]> {
    return this.call(async () => {
      const refunds: Refund[] = [];
      for await (const refund of this.stripe.refunds.list({ payment_intent: intentId, limit: REFUNDS_PAGE })) refunds.push(refundOf(refund));
      return refunds;
    });
  }

  async retrieveRefund(refundId: string): Promise<Refund> {
    return refundOf(await this.call(() => this.stripe.refunds.retrieve(refundId)));
  }

  /** Like `call`; a refusal of the amount or currency becomes {@link AmountRefusedError}. */
  private async callRefusingAmounts<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await this.call(request, KEYED);
    } catch (error) {
      if (error instanceof Stripe.errors.StripeInvalidRequestError && (AMOUNT_REFUSALS.has(error.code ?? '') || AMOUNT_PARAMS.has(error.param ?? ''))) {
        throw new AmountRefusedError(error.message);
      }
      throw error;
    }
  }

  /**
   * Runs one SDK call; whatever leaves the outcome unknown becomes {@link GatewayIndeterminateError}.
   * `keyed`: a write under our idempotency key, whose 5xx the processor keeps under that key.
   */
  private async call<T>(request: () => Promise<T>, keyed = false): Promise<T> {
    try {
      return await withoutCallSiteTrace(request);
    } catch (error) {
      throw indeterminateOrSelf(error, keyed);
    }
  }

  /**
   * The intent an error answer carries: a 402 (declined, or a processing error) leaves it waiting for
   * another payment method; a 400 "unexpected state" says what it became (a confirmation or a
   * cancellation that lost to another). Undefined for any other error.
   */
  private intentInError(error: unknown, intentId: string): IntentState | undefined {
    if (!(error instanceof Stripe.errors.StripeError)) return undefined;
    const intent = error.payment_intent;
    if (error instanceof Stripe.errors.StripeCardError) {
      if (intent) return stateOf(intent);
      return error.code === PROCESSING_ERROR ? { id: intentId, status: 'failed' } : { id: intentId, status: 'declined', declinedFor: declineReasonOf(error.code) };
    }
    if (error.code === 'payment_intent_unexpected_state' && intent) return stateOf(intent);
    return undefined;
  }
}

/**
 * Starts an SDK call without the stack trace the SDK formats on every call to append our call site
 * to an error it may raise later (stripe-node#2688): through our callers' async frames, that was
 * about 0.06 ms of CPU a call, a tenth of a payment's. The SDK's errors keep their own trace, the
 * SDK's frames, without ours appended; what `call` makes of them is traced from here.
 */
function withoutCallSiteTrace<T>(request: () => Promise<T>): Promise<T> {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return request();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

function paymentMethodOf(token: string): Stripe.PaymentIntentConfirmParams {
  // A legacy card token (`tok_…`) is turned into a payment method on the way; anything else is one.
  if (token.startsWith('tok_')) {
    return { payment_method_data: { type: 'card', card: { token } } as Stripe.PaymentIntentConfirmParams.PaymentMethodData };
  }
  return { payment_method: token };
}

function stateOf(intent: Stripe.PaymentIntent): IntentState {
  const status = statusOf(intent);
  if (status === 'declined') return { id: intent.id, status, declinedFor: declineReasonOf(intent.last_payment_error?.code) };
  if (status === 'requires_action' && intent.client_secret) return { id: intent.id, status, clientSecret: intent.client_secret };
  return { id: intent.id, status };
}

function declineReasonOf(code: string | undefined): DeclineReason {
  return code === AUTHENTICATION_FAILURE ? 'authentication' : 'card';
}

function statusOf(intent: Stripe.PaymentIntent): IntentStatus {
  switch (intent.status) {
    case 'succeeded':
      return 'succeeded';
    case 'requires_payment_method': {
      const lastError = intent.last_payment_error;
      if (!lastError) return 'confirmable';
      return lastError.code === PROCESSING_ERROR ? 'failed' : 'declined';
    }
    case 'requires_confirmation':
      return 'confirmable';
    case 'requires_action':
      return 'requires_action';
    case 'canceled':
      return 'canceled';
    // Captured automatically: `requires_capture` only passes through on its way to succeeded.
    default:
      return 'processing';
  }
}

function refundOf(refund: Stripe.Refund): Refund {
  const intent = refund.payment_intent;
  return {
    id: refund.id,
    status: refundStatusOf(refund.status),
    intentId: typeof intent === 'string' ? intent : (intent?.id ?? ''),
    amount: refund.amount,
    metadata: refund.metadata ?? {},
  };
}

/** Stripe's `requires_action` (the customer must give bank details) is not decided yet either: pending. */
function refundStatusOf(status: string | null): RefundStatus {
  return status === 'succeeded' || status === 'failed' || status === 'canceled' ? status : 'pending';
}

/**
 * Errors that leave the outcome unknown: no answer, 409 (a key in use), 429, and 5xx — which Stripe
 * keeps under the key of a keyed write, so that key can only replay it (a read's 5xx is the
 * processor failing, and asking again may answer). Declines and other 4xx say what happened.
 */
function indeterminateOrSelf(error: unknown, keyed: boolean): unknown {
  if (error instanceof Stripe.errors.StripeConnectionError) return new GatewayIndeterminateError(`processor unreachable: ${error.message}`, false);
  if (!(error instanceof Stripe.errors.StripeError)) return error;
  const status = error.statusCode ?? 0;
  if (status >= 500) return new GatewayIndeterminateError(`processor answered ${status}: ${error.message}`, keyed);
  if (status === 409 || status === 429) return new GatewayIndeterminateError(`processor answered ${status}: ${error.message}`, false);
  return error;
}
