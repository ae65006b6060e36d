import { type Answer, answer, apiErrorAnswer, errorAnswer, resourceMissing } from './answers.js';
import { type EventOrigin, recordEvent } from './events.js';
import type { FormObject } from './form-body.js';
import { newId } from './ids.js';
import { listPage, pageRequestOf } from './pagination.js';
import { metadataOf, optionalAmount, optionalOneOf, optionalString, rejectUnknownParams, requiredString } from './params.js';
import { findIntent } from './payment-intent-rows.js';
import { addRefundedAmount, findRefund, insertRefund, lockCharge, REFUNDS, refundObject, type RefundRow } from './refund-rows.js';
import { FAILING_REFUND_AMOUNT, refundStartOf } from './test-payment-methods.js';
import type { Queryable } from './transaction.js';

/** The Refund endpoints. Each runs inside the transaction that also completes its idempotency key. */

const CREATE_PARAMS = ['payment_intent', 'amount', 'metadata', 'reason', 'expand'];
const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;

export async function createRefund(db: Queryable, params: FormObject, origin: EventOrigin): Promise<Answer> {
  rejectUnknownParams(params, CREATE_PARAMS);
  const paymentIntent = requiredString(params, 'payment_intent');
  const requested = optionalAmount(params, 'amount');
  const metadata = metadataOf(params);
  const reason = optionalOneOf(params, 'reason', REFUND_REASONS) ?? null;
  const intent = await findIntent(db, paymentIntent);
  if (!intent) throw resourceMissing(400, 'payment_intent', `No such payment_intent: '${paymentIntent}'`);
  if (intent.status !== 'succeeded' || intent.latest_charge === null) {
    return errorAnswer(400, { type: 'invalid_request_error', message: 'This PaymentIntent does not have a successful charge to refund.' });
  }
  const charge = await lockCharge(db, intent.latest_charge);
  const left = charge.amount - charge.amountRefunded;
  if (left === 0) {
    return errorAnswer(400, { type: 'invalid_request_error', code: 'charge_already_refunded', message: `Charge ${charge.id} has already been refunded.` });
  }
  const amount = requested ?? left;
  if (amount > left) {
    return errorAnswer(400, {
      type: 'invalid_request_error',
      param: 'amount',
      message: `Refund amount ($${majorUnits(amount)}) is greater than unrefunded amount on charge ($${majorUnits(left)})`,
    });
  }
  if (amount === FAILING_REFUND_AMOUNT) return apiErrorAnswer('The processor failed to refund this charge; nothing was refunded.');
  // A pending refund holds its amount too: what is left to refund never counts on it failing.
  await addRefundedAmount(db, charge.id, amount);
  const status = refundStartOf(charge.confirmedWith) === 'pending' ? 'pending' : 'succeeded';
  const row = await insertRefund(db, { id: newId('re'), paymentIntent, charge: charge.id, amount, currency: intent.currency, status, metadata, reason });
  await recordEvent(db, origin, 'refund.created', refundObject(row));
  return answer(200, refundObject(row));
}

export async function retrieveRefund(db: Queryable, id: string, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, ['expand']);
  const row = await findRefund(db, id);
  if (!row) throw resourceMissing(404, 'id', `No such refund: '${id}'`);
  return answer(200, refundObject(row));
}

export async function listRefunds(db: Queryable, params: FormObject): Promise<Answer> {
  rejectUnknownParams(params, ['payment_intent', 'limit', 'starting_after', 'ending_before', 'expand']);
  const page = pageRequestOf(params);
  const paymentIntent = optionalString(params, 'payment_intent');
  const listed =
    paymentIntent === undefined
      ? { table: REFUNDS, condition: 'TRUE', values: [] }
      : { table: REFUNDS, condition: 'payment_intent = $3::text', values: [paymentIntent] };
  return listPage<RefundRow>(db, listed, page, '/v1/refunds', refundObject);
}

/** 1234 → "12.34" (minor units shown with two decimals, as Stripe's message does). */
function majorUnits(minor: number): string {
  return `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}
