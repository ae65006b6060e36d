import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isInternalAddress } from './address-policy.js';

/** Why a webhook URL is refused; undefined when it may be used. */
export type UrlRefusal = string | undefined;

/**
 * Checks a webhook URL when it is registered: `https` only, and a host none of whose addresses is
 * internal (see `isInternalAddress`). A name can resolve elsewhere later (DNS rebinding): delivery
 * checks the address it actually connects to again (`webhook-http.ts`). `allowInsecure` (local
 * development, tests) allows `http` and internal hosts.
 */
export async function refusalOf(raw: string, allowInsecure: boolean): Promise<UrlRefusal> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (url.username || url.password) return 'url must not carry credentials';
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) return 'url must use https';
  if (allowInsecure) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    return `url's host ${host} does not resolve`;
  }
  if (addresses.some(isInternalAddress)) return `url's host ${host} resolves to a loopback, private, link-local or otherwise internal address`;
  return undefined;
}
