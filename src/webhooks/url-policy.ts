import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isInternalAddress } from './address-policy.js';

/** Why a webhook URL is refused; undefined when it may be used. */
export type UrlRefusal = string | undefined;

/**
 * C0 and C1 controls (CR, LF, ESC, NUL …: a forged log line, a terminal escape, a NUL PostgreSQL
 * can't store), lone surrogates (not UTF-8), and the line and bidirectional-override separators
 * that reorder or break a line on screen.
 */
const UNSAFE_CHARACTERS = /[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/**
 * Checks a webhook URL when it is registered: `https` only, and a host none of whose addresses is
 * internal (see `isInternalAddress`). A name can resolve elsewhere later (DNS rebinding): delivery
 * checks the address it actually connects to again (`webhook-http.ts`). `allowInsecure` (local
 * development, tests) allows `http` and internal hosts.
 */
export async function refusalOf(raw: string, allowInsecure: boolean): Promise<UrlRefusal> {
  // Before parsing: the URL parser drops tabs and newlines silently, but the raw text is what is stored and shown.
  if (UNSAFE_CHARACTERS.test(raw)) return 'url must not contain control characters';
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
    return hostNotAllowed(host);
  }
  return addresses.some(isInternalAddress) ? hostNotAllowed(host) : undefined;
}

/**
 * One text for a host that does not resolve and for one that resolves to an internal address, so
 * that registering URLs can't be used to learn which names exist on the service's network.
 */
function hostNotAllowed(host: string): string {
  return `url's host ${host} is not allowed: it must resolve, and only to public addresses`;
}

