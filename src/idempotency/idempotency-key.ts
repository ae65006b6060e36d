import { MAX_KEY_LENGTH } from './idempotency.constants.js';

export type KeyParseResult = { readonly ok: true; readonly key: string } | { readonly ok: false; readonly reason: string };

const BARE_KEY = /^[\x21-\x7e]+$/;
// An RFC 9651 sf-string: printable ASCII, with `"` and `\` escaped by a backslash.
const SF_STRING = /^"((?:[\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * What this parser accepts, as one pattern for the OpenAPI document: a bare key, or a quoted one whose
 * escapes (`\"`, `\\`) count as one character. Only `\xHH` escapes, which every common regex engine
 * reads alike; a unit test checks it against the parser.
 */
export const KEY_HEADER_PATTERN =
  `^(?:[\\x21\\x23-\\x7E][\\x21-\\x7E]{0,${MAX_KEY_LENGTH - 1}}|"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\["\\\\]){1,${MAX_KEY_LENGTH}}")$`;

/**
 * Reads an `Idempotency-Key` header: a bare token (Stripe style) or a quoted structured-field
 * string (IETF draft). The quotes and escapes are not part of the key.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): KeyParseResult {
  if (header === undefined) return { ok: false, reason: 'the Idempotency-Key header is required on this route' };
  if (Array.isArray(header)) return { ok: false, reason: 'send exactly one Idempotency-Key header' };
  const value = header.trim();
  const key = value.startsWith('"') ? unquote(value) : value;
  if (key === undefined) return { ok: false, reason: 'the quoted Idempotency-Key is not a valid structured-field string' };
  if (key.length === 0) return { ok: false, reason: 'the Idempotency-Key must not be empty' };
  if (key.length > MAX_KEY_LENGTH) return { ok: false, reason: `the Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters` };
  if (!value.startsWith('"') && !BARE_KEY.test(key)) {
    return { ok: false, reason: 'the Idempotency-Key may contain only printable ASCII characters without spaces' };
  }
  return { ok: true, key };
}

function unquote(value: string): string | undefined {
  const match = SF_STRING.exec(value);
  return match ? match[1]!.replace(/\\(["\\])/g, '$1') : undefined;
}
