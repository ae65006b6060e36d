import type { LookupFunction } from 'node:net';
import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isInternalAddress } from './address-policy.js';

export interface WebhookRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Allow http and internal addresses (WEBHOOKS_ALLOW_INSECURE_URLS). */
  readonly allowInsecure: boolean;
}

/** What an attempt got: a status (any, redirects included: they are never followed), or no answer. */
export type WebhookAnswer = { readonly status: number } | { readonly error: string };

// Enough of an answer to log; the rest is read and dropped so the socket can be reused.
const MAX_BODY_BYTES = 64 * 1024;

/**
 * Refuses to connect to an internal address, checked on the address the name resolved to right
 * before connecting (the one the socket uses), so a name that resolved to a public address at
 * registration and to 10.0.0.1 now (DNS rebinding) is still refused.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as unknown as Array<{ address: string; family: number }>;
    const refused = list.find((entry) => isInternalAddress(entry.address));
    if (refused) return callback(Object.assign(new Error(`${hostname} resolves to internal address ${refused.address}`), { code: 'EINTERNALADDRESS' }), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
};

/** POSTs one delivery: no redirects, one timeout for the whole exchange, no connection to an internal address. */
export function postWebhook(request: WebhookRequest): Promise<WebhookAnswer> {
  const url = new URL(request.url);
  if (url.protocol !== 'https:' && !(request.allowInsecure && url.protocol === 'http:')) return Promise.resolve({ error: 'url is not https' });
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!request.allowInsecure && isInternalAddressLiteral(host)) return Promise.resolve({ error: `${host} is an internal address` });
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const outgoing = transport.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body), 'user-agent': 'pagos-webhooks/1', ...request.headers },
        signal: AbortSignal.timeout(request.timeoutMs),
        agent: false,
        ...(!request.allowInsecure && { lookup: publicOnlyLookup }),
      },
      (incoming) => {
        let read = 0;
        incoming.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_BODY_BYTES) incoming.destroy();
        });
        incoming.on('close', () => resolve({ status: incoming.statusCode ?? 0 }));
        incoming.on('error', () => resolve({ status: incoming.statusCode ?? 0 }));
      },
    );
    outgoing.on('error', (error: Error & { code?: string }) => resolve({ error: error.name === 'AbortError' || error.name === 'TimeoutError' ? `no answer within ${request.timeoutMs} ms` : `${error.code ?? error.name}: ${error.message}` }));
    outgoing.end(request.body);
  });
}

function isInternalAddressLiteral(host: string): boolean {
  return /^[0-9.]+$/.test(host) || host.includes(':') ? isInternalAddress(host) : false;
}
