import { type Answer, answer, errorAnswer, invalidParameter, type RequestRejection, resourceMissing } from './answers.js';
import { type EventOrigin, recordIntentEvent } from './events.js';
import { newId } from './ids.js';
import { CONFIRMABLE_STATUSES, insertCharge, intentObject, type IntentRow, type IntentStatus, recordAwaiting, recordPaymentFailure, recordSuccess } from './payment-intent-rows.js';
import { consumeSingleUseToken } from './single-use-tokens.js';
import { outcomeOfConfirming } from './test-payment-methods.js';
import type { Queryable } from './transaction.js';

/** What confirming a PaymentIntent does, by its status and the payment method's test value. */

export const DECLINED = { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } as const;

/** The intent is locked by this transaction: the status checked here is the one the outcome replaces. */
export async function confirmLockedIntent(db: Queryable, row: IntentRow, chosen: string | undefined, origin: EventOrigin): Promise<Answer> {
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
  if (outcome.kind === 'unknown_payment_method') throw noSuchPaymentMethod(paymentMethod);
  await consumeSingleUseToken(db, paymentMethod, row.id);
  switch (outcome.kind) {
    case 'declined':
      return paymentFailed(db, row, { ...DECLINED, decline_code: outcome.declineCode }, CONFIRMABLE_STATUSES, origin);
    case 'processing_error':
      return paymentFailed(db, row, { type: 'card_error', code: 'processing_error', message: 'An error occurred while processing your card. Try again in a little bit.' }, CONFIRMABLE_STATUSES, origin);
    case 'requires_action':
    case 'processing': {
      const awaiting = await recordAwaiting(db, row.id, outcome.kind, paymentMethod);
      await recordIntentEvent(db, origin, awaiting);
      return answer(200, intentObject(awaiting));
    }
    case 'succeeded':
      return answer(200, intentObject(await chargeIntent(db, row, paymentMethod, CONFIRMABLE_STATUSES, origin)));
    default:
      return outcome satisfies never;
  }
}

/** Charges the intent's amount and moves it `from` → succeeded, with its event. */
export async function chargeIntent(db: Queryable, row: IntentRow, paymentMethod: string, from: readonly IntentStatus[], origin: EventOrigin): Promise<IntentRow> {
  const chargeId = newId('ch');
  await insertCharge(db, chargeId, row.id, Number(row.amount), paymentMethod);
  const attached = paymentMethod.startsWith('tok_') ? newId('pm') : paymentMethod;
  const succeeded = await recordSuccess(db, row.id, attached, chargeId, from);
  await recordIntentEvent(db, origin, succeeded);
  return succeeded;
}

/** Moves the intent `from` → requires_payment_method with the failure, with its event. */
export async function failIntent(db: Queryable, row: IntentRow, lastPaymentError: Record<string, string>, from: readonly IntentStatus[], origin: EventOrigin): Promise<IntentRow> {
  const failed = await recordPaymentFailure(db, row.id, lastPaymentError, from);
  await recordIntentEvent(db, origin, failed);
  return failed;
}

/** A 402 stored like a success: the intent keeps the failure as `last_payment_error`. */
async function paymentFailed(db: Queryable, row: IntentRow, lastPaymentError: Record<string, string>, from: readonly IntentStatus[], origin: EventOrigin): Promise<Answer> {
  const failed = await failIntent(db, row, lastPaymentError, from, origin);
  return errorAnswer(402, { ...lastPaymentError, type: 'card_error', message: lastPaymentError.message!, payment_intent: intentObject(failed) });
}

export function unexpectedState(row: IntentRow, message: string): Answer {
  return errorAnswer(400, { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message, payment_intent: intentObject(row) });
}

export function noSuchPaymentMethod(paymentMethod: string): RequestRejection {
  return resourceMissing(400, 'payment_method', `No such PaymentMethod: '${paymentMethod}'`);
}
