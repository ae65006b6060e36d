import { assertAmountWithinLimits, assertSupportedCurrency } from './amount-limits.js';
import { type Answer, answer, invalidParameter, type RequestRejection, resourceMissing } from './answers.js';
import { type EventOrigin, recordIntentEvent } from './events.js';
import type { FormObject } from './form-body.js';
import { newId } from './ids.js';
import { listPage, pageRequestOf } from './pagination.js';
import { metadataOf, optionalBoolean, optionalObject, optionalOneOf, optionalString, rejectUnknownParams, requiredAmount, requiredCurrency } from './params.js';
import { confirmLockedIntent, noSuchPaymentMethod, unexpectedState } from './payment-intent-confirmation.js';
import { CANCELABLE_STATUSES, findIntent, insertIntent, intentObject, type IntentRow, lockIntent, recordCancellation } from './payment-intent-rows.js';
import { SCHEMA } from './schema.js';
import { outcomeOfConfirming } from './test-payment-methods.js';
import type { Queryable } from './transaction.js';

/** The PaymentIntent endpoints. Each runs inside the transaction that also completes its idempotency key. */

// `return_url` is accepted and unused: card payments here never redirect. `payment_method_types` is
// the name before API version 2026-11-18 (stripe 23), which calls it `allowed_payment_method_types`.
const CREATE_PARAMS = [
  'amount',
  'currency',
  'allowed_payment_method_types',
  'payment_method_types',
  'automatic_payment_methods',
  'metadata',
  'description',
  'payment_method',
  'payment_method_data',
  'confirm',
  'return_url',
  'expand',
];
const CONFIRM_PARAMS = ['payment_method', 'payment_method_data', 'return_url', 'expand'];
const CANCEL_PARAMS = ['cancellation_reason', 'expand'];
const CANCELLATION_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const;

export async function createIntent(db: Queryable, params: FormObject, origin: EventOrigin): Promise<Answer> {
  rejectUnknownParams(params, CREATE_PARAMS);
  const paymentMethod = paymentMethodOf(params);
  if (paymentMethod !== undefined) assertPaymentMethodExists(paymentMethod);
  const confirm = optionalBoolean(params, 'confirm') ?? false;
  const listedTypes = paymentMethodTypesOf(params);
  const { amount, currency } = amountAndCurrencyOf(params);
  const row = await insertIntent(db, {
    id: newId('pi'),
    amount,
    currency,
    status: paymentMethod === undefined ? 'requires_payment_method' : 'requires_confirmation',
    paymentMethod: paymentMethod ?? null,
    paymentMethodTypes: listedTypes ?? ['card'],
    automaticPaymentMethods: listedTypes ? null : automaticPaymentMethodsOf(params),
    metadata: metadataOf(params),
    description: optionalString(params, 'description') ?? null,
  });
  return confirm ? confirmLockedIntent(db, row, undefined, origin) : answer(200, intentObject(row));
}

export async function confirmIntent(db: Queryable, id: string, params: FormObject, origin: EventOrigin): Promise<Answer> {
  rejectUnknownParams(params, CONFIRM_PARAMS);
  const chosen = paymentMethodOf(params);
  return confirmLockedIntent(db, await lockedIntent(db, id), chosen, origin);
}

export async function retrieveIntent(db: Queryable, id: string, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, ['expand', 'client_secret']);
  const row = await findIntent(db, id);
  if (!row) throw noSuchIntent(id);
  return answer(200, intentObject(row));
}

export async function cancelIntent(db: Queryable, id: string, params: FormObject, origin: EventOrigin): Promise<Answer> {
  rejectUnknownParams(params, CANCEL_PARAMS);
  const reason = optionalOneOf(params, 'cancellation_reason', CANCELLATION_REASONS);
  const row = await lockedIntent(db, id);
  if (!CANCELABLE_STATUSES.includes(row.status)) {
    return unexpectedState(
      row,
      `You cannot cancel this PaymentIntent because it has a status of ${row.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE_STATUSES.join(', ')}.`,
    );
  }
  const canceled = await recordCancellation(db, id, reason ?? null);
  await recordIntentEvent(db, origin, canceled);
  return answer(200, intentObject(canceled));
}

export async function listIntents(db: Queryable, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, ['limit', 'starting_after', 'ending_before', 'expand']);
  return listPage(db, { table: `${SCHEMA}.payment_intents`, condition: 'TRUE', values: [] }, pageRequestOf(params), '/v1/payment_intents', intentObject);
}

export async function lockedIntent(db: Queryable, id: string): Promise<IntentRow> {
  const row = await lockIntent(db, id);
  if (!row) throw noSuchIntent(id);
  return row;
}

function amountAndCurrencyOf(params: FormObject): { amount: number; currency: string } {
  const amount = requiredAmount(params, 'amount');
  const currency = requiredCurrency(params);
  assertSupportedCurrency(currency);
  assertAmountWithinLimits(amount, currency);
  return { amount, currency };
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

/** The types the client listed, under either name; undefined when it let Stripe choose. */
function paymentMethodTypesOf(params: FormObject): string[] | undefined {
  const name = params.allowed_payment_method_types === undefined ? 'payment_method_types' : 'allowed_payment_method_types';
  const types = params[name];
  if (types === undefined) return undefined;
  if (!Array.isArray(types) || types.length === 0 || types.some((type) => typeof type !== 'string')) {
    throw invalidParameter(name, `Invalid array: ${name} must be a list of strings.`);
  }
  return types as string[];
}

/** Automatic payment methods are the default since API version 2023-08-16; this processor offers cards only. */
function automaticPaymentMethodsOf(params: FormObject): Record<string, unknown> {
  const automatic = optionalObject(params, 'automatic_payment_methods');
  const allowRedirects = automatic && optionalOneOf(automatic, 'allow_redirects', ['always', 'never']);
  return allowRedirects === undefined ? { enabled: true } : { enabled: true, allow_redirects: allowRedirects };
}

function assertPaymentMethodExists(paymentMethod: string): void {
  if (outcomeOfConfirming(paymentMethod).kind === 'unknown_payment_method') throw noSuchPaymentMethod(paymentMethod);
}

export function noSuchIntent(id: string): RequestRejection {
  return resourceMissing(404, 'intent', `No such payment_intent: '${id}'`);
}
