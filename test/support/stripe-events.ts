import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { checkedFetch, type HttpResult } from './http.js';

/** A webhook signing secret, as Stripe gives one per endpoint. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** A Stripe event about `object` (a PaymentIntent or a Refund), shaped as Stripe sends it. */
export function stripeEvent(type: string, object: Record<string, unknown>, id = `evt_${randomUUID().replaceAll('-', '')}`): Record<string, unknown> {
  return {
    id,
    object: 'event',
    api_version: '2026-11-18.endive',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

/** `Stripe-Signature` for `body` signed at `unixSeconds` with `secret` (HMAC-SHA256 over "t.body", keyed by the whole whsec_ string). */
export function stripeSignature(secret: string, body: string, unixSeconds = Math.floor(Date.now() / 1000)): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

export interface Delivery {
  /** Overrides the signature header; null leaves it out. */
  readonly signature?: string | null;
}

/** POSTs `body` to the service's webhook route as Stripe would: the exact bytes, signed (unless told otherwise), no bearer token. */
export async function deliverStripeEvent(baseUrl: string, secret: string, body: string, { signature }: Delivery = {}): Promise<HttpResult> {
  const header = signature === undefined ? stripeSignature(secret, body) : signature;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...(header !== null && { 'stripe-signature': header }) };
  const response = await checkedFetch(`${baseUrl}/stripe/webhooks`, { method: 'POST', headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? JSON.parse(text) : undefined };
}
