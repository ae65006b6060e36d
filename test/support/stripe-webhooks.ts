import { createHmac, randomBytes } from 'node:crypto';

/** The signing secret tests give a service (STRIPE_WEBHOOK_SECRET) and the processor's webhook endpoint. */
export const TEST_WEBHOOK_SECRET = 'whsec_pagos_refund_tests_secret';

/**
 * Delivers a Stripe event to `POST /stripe/webhooks` as Stripe does: its body signed with
 * `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 keyed by the whsec_ secret over "t.body">`.
 * Only `id`, `type` and `data.object` matter to the service, which retrieves the object itself.
 */
export async function deliverStripeEvent(
  baseUrl: string, event: { type: string; object: { id: string } & Record<string, unknown>; id?: string }, secret = TEST_WEBHOOK_SECRET,
): Promise<{ status: number; json: any }> {
  const id = event.id ?? `evt_test_${randomBytes(12).toString('hex')}`;
  const body = JSON.stringify({ id, object: 'event', type: event.type, created: Math.floor(Date.now() / 1000), data: { object: event.object } });
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  const response = await fetch(`${baseUrl}/stripe/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': `t=${t},v1=${v1}` },
    body,
  });
  return { status: response.status, json: await response.json() };
}

/** Points the processor process's webhooks at a service's `POST /stripe/webhooks` (its fault API). */
export async function sendProcessorWebhooksTo(processorUrl: string, serviceBaseUrl: string, secret = TEST_WEBHOOK_SECRET): Promise<void> {
  const response = await fetch(`${processorUrl}/_faults/webhook-endpoint`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${serviceBaseUrl}/stripe/webhooks`, secret }),
  });
  if (!response.ok) throw new Error(`setting the webhook endpoint answered ${response.status}: ${await response.text()}`);
}
