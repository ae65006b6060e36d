import { RequestRejection } from './answers.js';
import { SCHEMA } from './schema.js';
import type { Queryable } from './transaction.js';

/**
 * A token that looks like one Stripe.js made (`tok_1…`) is single-use, as real tokens are; the named
 * test tokens (`tok_visa`, `tok_chargeDeclined`, …) are reusable, as in Stripe's test mode.
 */
const REAL_LOOKING_TOKEN = /^tok_1[A-Za-z0-9]{8,}$/;

export function isSingleUseToken(paymentMethod: string): boolean {
  return REAL_LOOKING_TOKEN.test(paymentMethod);
}

/**
 * Records the token as used, in the confirming transaction: it is consumed exactly when that
 * confirmation commits. Two confirmations racing with one token meet on the primary key; the second
 * waits for the first and, once it commits, is refused (not stored: it changed nothing).
 */
export async function consumeSingleUseToken(db: Queryable, paymentMethod: string, paymentIntent: string): Promise<void> {
  if (!isSingleUseToken(paymentMethod)) return;
  const { rowCount } = await db.query(`INSERT INTO ${SCHEMA}.used_tokens (token, payment_intent) VALUES ($1::text, $2::text) ON CONFLICT (token) DO NOTHING`, [
    paymentMethod,
    paymentIntent,
  ]);
  if (rowCount === 1) return;
  throw new RequestRejection(400, {
    type: 'invalid_request_error',
    code: 'token_already_used',
    param: 'payment_method_data[card][token]',
    message: `You cannot use a Stripe token more than once: ${paymentMethod}.`,
  });
}
