/** The closed sets of statuses, mirrored by the CHECKs in schema.ts. */
export const INTENT_STATUSES = ['requires_payment_method', 'requires_confirmation', 'requires_action', 'processing', 'succeeded', 'canceled'] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

/** `pending` and `succeeded` may still fail (an asynchronous refund failure, as Stripe reports one). */
export const REFUND_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];
