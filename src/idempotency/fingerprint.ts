import { createHash } from 'node:crypto';
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
  const canonicalBody = body === undefined ? '' : (canonicalize(body) ?? '');
  return createHash('sha256').update(`${method.toUpperCase()}\n${target}\n${canonicalBody}`).digest('hex');
}
