import { type Answer, answer, errorAnswer, invalidParameter, type RequestRejection, resourceMissing } from './answers.js';
import { newId } from './ids.js';
import {
  CONFIRMABLE_STATUSES,
  insertCharge,
  intentObject,
  type IntentRow,
  recordActionRequired,
  recordPaymentFailure,
  recordSuccess,
} from './payment-intent-rows.js';
import { outcomeOfConfirming } from './test-payment-methods.js';
import type { Queryable } from './transaction.js';

/** What confirming a PaymentIntent does, by its status and the payment method's test value. */

/** The intent is locked by this transaction: the status checked here is the one the outcome replaces. */
export async function confirmLockedIntent(db: Queryable, row: IntentRow, chosen: string | undefined): Promise<Answer> {
  if (!CONFIRMABLE_STATUSES.includes(row.status)) {
    const message =
      row.status === 'succeeded'
        ? 'You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed.'
        : `You cannot confirm this PaymentIntent because it has a status of ${row.status}.`;
    return unexpectedState(row, message);
  }
  const paymentMethod = chosen ?? row.payment_method;
  if (paymentMethod === null) {
    throw invalidParameter('payment_method', "You cannot confirm this PaymentIntent because it's missing a payment method. Pass payment_method or payment_method_data.");
  }
  const outcome = outcomeOfConfirming(paymentMethod);
  switch (outcome.kind) {
    case 'unknown_payment_method':
      throw noSuchPaymentMethod(paymentMethod);
    case 'declined':
      return paymentFailed(db, row, { type: 'card_error', code: 'card_declined', decline_code: outcome.declineCode, message: 'Your card was declined.' });
    case 'processing_error':
      return paymentFailed(db, row, { type: 'card_error', code: 'processing_error', message: 'An error occurred while processing your card. Try again in a little bit.' });
    case 'requires_action':
      return answer(200, intentObject(await recordActionRequired(db, row.id, paymentMethod)));
    case 'succeeded': {
      const chargeId = newId('ch');
      await insertCharge(db, chargeId, row.id, Number(row.amount));
      const attached = paymentMethod.startsWith('tok_') ? newId('pm') : paymentMethod;
      return answer(200, intentObject(await recordSuccess(db, row.id, attached, chargeId)));
    }
    default:
      return outcome satisfies never;
  }
}

/** A 402 stored like a success: the intent keeps the failure as `last_payment_error`. */
async function paymentFailed(db: Queryable, row: IntentRow, lastPaymentError: Record<string, string>): Promise<Answer> {
  const failed = await recordPaymentFailure(db, row.id, lastPaymentError);
  return errorAnswer(402, { ...lastPaymentError, type: 'card_error', message: lastPaymentError.message!, payment_intent: intentObject(failed) });
}

export function unexpectedState(row: IntentRow, message: string): Answer {
  return errorAnswer(400, { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message, payment_intent: intentObject(row) });
}

export function noSuchPaymentMethod(paymentMethod: string): RequestRejection {
  return resourceMissing(400, 'payment_method', `No such PaymentMethod: '${paymentMethod}'`);
}
