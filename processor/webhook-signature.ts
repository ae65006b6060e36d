import { createHmac } from 'node:crypto';

/**
 * Stripe's webhook signature: `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`,
 * keyed by the whole `whsec_…` secret as UTF-8 (not base64-decoded, unlike Standard Webhooks), so
 * `stripe.webhooks.constructEvent(body, header, secret)` verifies it.
 */
export function stripeSignatureHeader(secret: string, body: string, unixSeconds: number): string {
  const signature = createHmac('sha256', secret).update(`${unixSeconds}.${body}`, 'utf8').digest('hex');
  return `t=${unixSeconds},v1=${signature}`;
}
