import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';

export interface FingerprintInput {
  readonly method: string;
  /** The request target as sent (path and query). */
  readonly target: string;
  readonly body: unknown;
}

/**
 * SHA-256 over method, target and the RFC 8785 canonical JSON of the body, so that key order and
 * whitespace do not change it while any change of a value does.
 */
export function fingerprintRequest({ method, target, body }: FingerprintInput): string {
  return hash('sha256', `${method.toUpperCase()}\n${target}\n${canonicalBodyOf(body)}`);
}

/**
 * RFC 8785 refuses a string that is not well-formed UTF-16 (a lone surrogate, which JSON's `\ud800`
 * can carry); such a body is hashed as JSON.stringify writes it (lone surrogates escaped, members
 * in the order received), after a `~` no canonical JSON starts with. The route then answers it
 * (its validation refuses the value), instead of a 500 before it ever ran.
 */
function canonicalBodyOf(body: unknown): string {
  if (body === undefined) return '';
  try {
    return canonicalize(body) ?? '';
  } catch {
    return `~${JSON.stringify(body)}`;
  }
}
