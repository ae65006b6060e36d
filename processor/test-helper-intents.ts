import { type Answer, answer, missingParameter } from './answers.js';
import type { EventOrigin } from './events.js';
import type { FormObject } from './form-body.js';
import { optionalOneOf, rejectUnknownParams } from './params.js';
import { chargeIntent, DECLINED, failIntent, unexpectedState } from './payment-intent-confirmation.js';
import { intentObject } from './payment-intent-rows.js';
import { lockedIntent } from './payment-intents.js';
import type { Queryable } from './transaction.js';

/**
 * Local-only test helpers (Stripe has no such routes) standing in for what happens away from the
 * API: the customer's bank answering a 3-D Secure challenge, and a payment that was `processing`
 * settling. Each moves the intent as Stripe would and writes the event, in one transaction.
 */

const AUTHENTICATION_FAILURE = {
  type: 'card_error',
  code: 'payment_intent_authentication_failure',
  message:
    'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
} as const;

interface Awaited {
  readonly status: 'requires_action' | 'processing';
  readonly verb: string;
  readonly failure: Record<string, string>;
}

const CHALLENGE: Awaited = { status: 'requires_action', verb: 'authenticate', failure: AUTHENTICATION_FAILURE };
const SETTLEMENT: Awaited = { status: 'processing', verb: 'settle', failure: { ...DECLINED, decline_code: 'generic_decline' } };

/** `POST /v1/test_helpers/payment_intents/:id/authenticate` with `outcome=success|failure`. */
export async function authenticateIntent(db: Queryable, id: string, params: FormObject, origin: EventOrigin): Promise<Answer> {
  return resolveIntent(db, id, params, origin, CHALLENGE);
}

/** `POST /v1/test_helpers/payment_intents/:id/settle` with `outcome=success|failure`. */
export async function settleIntent(db: Queryable, id: string, params: FormObject, origin: EventOrigin): Promise<Answer> {
  return resolveIntent(db, id, params, origin, SETTLEMENT);
}

async function resolveIntent(db: Queryable, id: string, params: FormObject, origin: EventOrigin, awaited: Awaited): Promise<Answer> {
  rejectUnknownParams(params, ['outcome', 'expand']);
  const outcome = optionalOneOf(params, 'outcome', ['success', 'failure']);
  if (outcome === undefined) throw missingParameter('outcome');
  const row = await lockedIntent(db, id);
  if (row.status !== awaited.status) {
    return unexpectedState(
      row,
      `You cannot ${awaited.verb} this PaymentIntent because it has a status of ${row.status}. Only a PaymentIntent with a status of ${awaited.status} may be ${awaited.verb}d.`,
    );
  }
  const from = [awaited.status];
  const resolved =
    outcome === 'success' ? await chargeIntent(db, row, row.payment_method!, from, origin) : await failIntent(db, row, awaited.failure, from, origin);
  return answer(200, intentObject(resolved));
}
