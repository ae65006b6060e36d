import { type Answer, answer, errorAnswer, invalidParameter, RequestRejection, resourceMissing } from './answers.js';
import type { FormObject } from './form-body.js';
import { newId } from './ids.js';
import { listPage, pageRequestOf } from './pagination.js';
import { metadataOf, optionalBoolean, optionalObject, optionalOneOf, optionalString, rejectUnknownParams, requiredAmount, requiredCurrency } from './params.js';
import {
  CANCELABLE_STATUSES,
  CONFIRMABLE_STATUSES,
  findIntent,
  insertCharge,
  insertIntent,
  intentObject,
  type IntentRow,
  lockIntent,
  recordActionRequired,
  recordCancellation,
  recordPaymentFailure,
  recordSuccess,
} from './payment-intent-rows.js';
import { SCHEMA } from './schema.js';
import { outcomeOfConfirming } from './test-payment-methods.js';
import type { Queryable } from './transaction.js';

/** The PaymentIntent endpoints. Each runs inside the transaction that also completes its idempotency key. */

const CREATE_PARAMS = ['amount', 'currency', 'payment_method_types', 'automatic_payment_methods', 'metadata', 'description', 'payment_method', 'confirm', 'expand'];
const CONFIRM_PARAMS = ['payment_method', 'payment_method_data', 'expand'];
const CANCEL_PARAMS = ['cancellation_reason', 'expand'];
const CANCELLATION_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const;

export async function createIntent(db: Queryable, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, CREATE_PARAMS);
  const paymentMethod = optionalString(params, 'payment_method');
  if (paymentMethod !== undefined) assertPaymentMethodExists(paymentMethod);
  const confirm = optionalBoolean(params, 'confirm') ?? false;
  const row = await insertIntent(db, {
    id: newId('pi'),
    amount: requiredAmount(params, 'amount'),
    currency: requiredCurrency(params),
    status: paymentMethod === undefined ? 'requires_payment_method' : 'requires_confirmation',
    paymentMethod: paymentMethod ?? null,
    paymentMethodTypes: paymentMethodTypesOf(params),
    metadata: metadataOf(params),
    description: optionalString(params, 'description') ?? null,
  });
  return confirm ? confirmLockedIntent(db, row, undefined) : answer(200, intentObject(row));
}

export async function confirmIntent(db: Queryable, id: string, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, CONFIRM_PARAMS);
  const chosen = paymentMethodOf(params);
  return confirmLockedIntent(db, await lockedIntent(db, id), chosen);
}

export async function retrieveIntent(db: Queryable, id: string, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, ['expand', 'client_secret']);
  const row = await findIntent(db, id);
  if (!row) throw noSuchIntent(id);
  return answer(200, intentObject(row));
}

export async function cancelIntent(db: Queryable, id: string, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, CANCEL_PARAMS);
  const reason = optionalOneOf(params, 'cancellation_reason', CANCELLATION_REASONS);
  const row = await lockedIntent(db, id);
  if (!CANCELABLE_STATUSES.includes(row.status)) {
    return unexpectedState(
      row,
      `You cannot cancel this PaymentIntent because it has a status of ${row.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE_STATUSES.join(', ')}.`,
    );
  }
  return answer(200, intentObject(await recordCancellation(db, id, reason ?? null)));
}

export async function listIntents(db: Queryable, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, ['limit', 'starting_after', 'ending_before', 'expand']);
  return listPage(db, { table: `${SCHEMA}.payment_intents`, condition: 'TRUE', values: [] }, pageRequestOf(params), '/v1/payment_intents', intentObject);
}

/** The intent is locked by this transaction: the status checked here is the one the outcome replaces. */
async function confirmLockedIntent(db: Queryable, row: IntentRow, chosen: string | undefined): Promise<Answer> {
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

function unexpectedState(row: IntentRow, message: string): Answer {
  return errorAnswer(400, { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message, payment_intent: intentObject(row) });
}

async function lockedIntent(db: Queryable, id: string): Promise<IntentRow> {
  const row = await lockIntent(db, id);
  if (!row) throw noSuchIntent(id);
  return row;
}

/** `payment_method`, or a legacy card token through `payment_method_data[type]=card&payment_method_data[card][token]=…`. */
function paymentMethodOf(params: FormObject): string | undefined {
  const paymentMethod = optionalString(params, 'payment_method');
  const data = optionalObject(params, 'payment_method_data');
  if (data === undefined) return paymentMethod;
  if (paymentMethod !== undefined) throw invalidParameter('payment_method_data', 'You cannot pass both payment_method and payment_method_data.');
  if (data.type !== 'card') throw invalidParameter('payment_method_data[type]', 'Only payment_method_data[type]=card is supported here.');
  const card = optionalObject(data, 'card');
  const token = card && optionalString(card, 'token');
  if (token === undefined) throw invalidParameter('payment_method_data[card][token]', 'Missing required param: payment_method_data[card][token].');
  return token;
}

function paymentMethodTypesOf(params: FormObject): string[] {
  const types = params.payment_method_types;
  if (types === undefined) {
    const automatic = optionalObject(params, 'automatic_payment_methods');
    if (automatic !== undefined) optionalOneOf(automatic, 'allow_redirects', ['always', 'never']);
    return ['card'];
  }
  if (!Array.isArray(types) || types.length === 0 || types.some((type) => typeof type !== 'string')) {
    throw invalidParameter('payment_method_types', 'Invalid array: payment_method_types must be a list of strings.');
  }
  return types as string[];
}

function assertPaymentMethodExists(paymentMethod: string): void {
  if (outcomeOfConfirming(paymentMethod).kind === 'unknown_payment_method') throw noSuchPaymentMethod(paymentMethod);
}

function noSuchPaymentMethod(paymentMethod: string): RequestRejection {
  return resourceMissing(400, 'payment_method', `No such PaymentMethod: '${paymentMethod}'`);
}

function noSuchIntent(id: string): RequestRejection {
  return resourceMissing(404, 'intent', `No such payment_intent: '${id}'`);
}
