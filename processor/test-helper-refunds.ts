import { type Answer, answer, errorAnswer, missingParameter, resourceMissing } from './answers.js';
import { type EventOrigin, recordEvent } from './events.js';
import type { FormObject } from './form-body.js';
import { optionalOneOf, rejectUnknownParams } from './params.js';
import { lockCharge, lockRefund, recordRefundStatus, refundObject, type RefundRow, returnRefundedAmount } from './refund-rows.js';
import type { RefundStatus } from './statuses.js';
import { refundStartOf } from './test-payment-methods.js';
import type { Queryable } from './transaction.js';

/**
 * Local-only test helper `POST /v1/test_helpers/refunds/:id/settle` with `outcome=succeeded|failed`:
 * the bank's late answer on a refund. A pending refund may go either way; a succeeded one may still
 * fail only when its charge was made with a refundFail test value (Stripe's asynchronous refund
 * failure). A failed refund gives its amount back to the charge.
 */

// Stripe's values of `failure_reason` (https://docs.stripe.com/api/refunds/object#refund_object-failure_reason).
const FAILURE_REASONS = ['lost_or_stolen_card', 'expired_or_canceled_card', 'charge_for_pending_refund_disputed', 'insufficient_funds', 'declined', 'merchant_request', 'unknown'] as const;
// What Stripe reports for its refundFail test card.
const DEFAULT_FAILURE_REASON = 'expired_or_canceled_card';

export async function settleRefund(db: Queryable, id: string, params: FormObject, origin: EventOrigin): Promise<Answer> {
  rejectUnknownParams(params, ['outcome', 'failure_reason', 'expand']);
  const outcome = optionalOneOf(params, 'outcome', ['succeeded', 'failed']);
  if (outcome === undefined) throw missingParameter('outcome');
  const reason = optionalOneOf(params, 'failure_reason', FAILURE_REASONS) ?? DEFAULT_FAILURE_REASON;
  const refund = await lockRefund(db, id);
  if (!refund) throw resourceMissing(404, 'id', `No such refund: '${id}'`);
  // Refund, then charge: nothing locks them in the other order (creation locks only the charge).
  const charge = await lockCharge(db, refund.charge);
  if (!canMove(refund, outcome, charge.confirmedWith)) {
    return errorAnswer(400, {
      type: 'invalid_request_error',
      message: `You cannot settle this refund as ${outcome} because it has a status of ${refund.status}.`,
    });
  }
  if (outcome === 'failed') await returnRefundedAmount(db, charge.id, Number(refund.amount));
  const moved = await recordRefundStatus(db, id, refund.status, outcome, outcome === 'failed' ? reason : null);
  await recordRefundEvents(db, origin, moved, refund.status);
  return answer(200, refundObject(moved));
}

function canMove(refund: RefundRow, to: RefundStatus, chargedWith: string | null): boolean {
  if (refund.status === 'pending') return true;
  return refund.status === 'succeeded' && to === 'failed' && refundStartOf(chargedWith) === 'succeeded_then_fails';
}

/** As Stripe: `refund.updated` and `charge.refund.updated` on any status change, `refund.failed` too when it failed. */
async function recordRefundEvents(db: Queryable, origin: EventOrigin, moved: RefundRow, previous: RefundStatus): Promise<void> {
  const object = refundObject(moved);
  const previousAttributes = moved.status === 'failed' ? { status: previous, failure_reason: null } : { status: previous };
  await recordEvent(db, origin, 'refund.updated', object, previousAttributes);
  await recordEvent(db, origin, 'charge.refund.updated', object, previousAttributes);
  if (moved.status === 'failed') await recordEvent(db, origin, 'refund.failed', object);
}
