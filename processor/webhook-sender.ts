import http from 'node:http';
import https from 'node:https';
import { stripeSignatureHeader } from './webhook-signature.js';

/** One webhook POST as Stripe sends it. */

// Stripe waits this long for an endpoint's answer before counting the attempt failed.
export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface WebhookEndpoint {
  readonly url: string;
  readonly secret: string;
}

export type PostResult = { readonly ok: boolean; readonly status: number | null; readonly error: string | null };

/** POSTs `body` signed now; resolves with the status (2xx is ok) or the network error, never rejects. */
export function postEvent(endpoint: WebhookEndpoint, body: string, signal: AbortSignal): Promise<PostResult> {
  const url = new URL(endpoint.url);
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    accept: '*/*; q=0.5, application/xml',
    'cache-control': 'no-cache',
    'content-length': Buffer.byteLength(body),
    'stripe-signature': stripeSignatureHeader(endpoint.secret, body, Math.floor(Date.now() / 1000)),
  };
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve) => {
    const settle = (result: PostResult) => {
      clearTimeout(timer);
      resolve(result);
    };
    // agent: false — a connection per POST, none left open between deliveries.
    const request = send(url, { method: 'POST', headers, agent: false, signal }, (response) => {
      response.resume();
      response.on('end', () => settle(statusResult(response.statusCode ?? 0)));
      response.on('error', (error) => settle({ ok: false, status: null, error: error.message }));
    });
    // The whole exchange, not only an idle socket: an endpoint answering slowly byte by byte times out too.
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${WEBHOOK_TIMEOUT_MS} ms`)), WEBHOOK_TIMEOUT_MS);
    request.on('error', (error) => settle({ ok: false, status: null, error: error.message }));
    request.end(body);
  });
}

function statusResult(status: number): PostResult {
  const ok = status >= 200 && status < 300;
  return { ok, status, error: ok ? null : `HTTP ${status}` };
}
