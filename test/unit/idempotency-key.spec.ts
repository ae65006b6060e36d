import { describe, expect, it } from '@jest/globals';
import { MAX_KEY_LENGTH } from '../../src/idempotency/idempotency.constants.js';
import fc from 'fast-check';
import { KEY_HEADER_PATTERN, parseIdempotencyKey, type KeyParseResult } from '../../src/idempotency/idempotency-key.js';

/** Pure parsing of the `Idempotency-Key` header; nothing else is involved. */
const UUID = '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f';

const keyOf = (result: KeyParseResult): string => {
  if (!result.ok) throw new Error(`expected a key, got the rejection "${result.reason}"`);
  return result.key;
};
const reasonOf = (result: KeyParseResult): string => {
  if (result.ok) throw new Error(`expected a rejection, got the key "${result.key}"`);
  return result.reason;
};

describe('parseIdempotencyKey: presence and multiplicity', () => {
  it('a missing header is rejected as required', () => {
    expect(parseIdempotencyKey(undefined)).toEqual({ ok: false, reason: 'the Idempotency-Key header is required on this route' });
  });

  it('two headers (an array) are rejected: exactly one is allowed', () => {
    expect(parseIdempotencyKey([UUID, UUID])).toEqual({ ok: false, reason: 'send exactly one Idempotency-Key header' });
  });

  it('an empty header is rejected as empty', () => {
    expect(parseIdempotencyKey('')).toEqual({ ok: false, reason: 'the Idempotency-Key must not be empty' });
  });

  it('a header of only whitespace is rejected as empty once trimmed', () => {
    expect(reasonOf(parseIdempotencyKey('  \t '))).toBe('the Idempotency-Key must not be empty');
  });

  it('an empty quoted string "" is rejected as empty', () => {
    expect(reasonOf(parseIdempotencyKey('""'))).toBe('the Idempotency-Key must not be empty');
  });
});

describe('parseIdempotencyKey: bare token (Stripe style)', () => {
  it('a bare UUID is the key, unchanged', () => {
    expect(parseIdempotencyKey(UUID)).toEqual({ ok: true, key: UUID });
  });

  it('surrounding whitespace is trimmed and is not part of the key', () => {
    expect(keyOf(parseIdempotencyKey(`  ${UUID}\t`))).toBe(UUID);
  });

  it('every printable ASCII character except space is allowed bare', () => {
    const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    // A leading `"` would switch to the quoted form, so put it last.
    const bare = printable.replace('"', '') + '"';
    expect(keyOf(parseIdempotencyKey(bare))).toBe(bare);
  });

  it(`exactly MAX_KEY_LENGTH (${MAX_KEY_LENGTH}) characters is accepted`, () => {
    expect(MAX_KEY_LENGTH).toBe(255);
    const key = 'k'.repeat(255);
    expect(keyOf(parseIdempotencyKey(key))).toBe(key);
  });

  it('256 characters is rejected as too long', () => {
    expect(reasonOf(parseIdempotencyKey('k'.repeat(256)))).toBe('the Idempotency-Key must be at most 255 characters');
  });

  it.each([
    ['NUL \\x00', 'abc\x00def'],
    ['tab \\t', 'abc\tdef'],
    ['DEL \\x7f', 'abc\x7fdef'],
    ['a control char \\x1f', 'abc\x1fdef'],
    ['non-ASCII é', 'café-1234'],
    ['an emoji', 'key-💳-1'],
    ['a space inside', 'abc def'],
  ])('a bare key containing %s is rejected', (_name, header) => {
    expect(reasonOf(parseIdempotencyKey(header))).toBe('the Idempotency-Key may contain only printable ASCII characters without spaces');
  });
});

describe('parseIdempotencyKey: quoted structured-field string (RFC 9651)', () => {
  it('"abc" yields abc: the quotes are not part of the key', () => {
    expect(parseIdempotencyKey('"abc"')).toEqual({ ok: true, key: 'abc' });
  });

  it('the bare and the quoted form of the same UUID give the same key', () => {
    expect(keyOf(parseIdempotencyKey(`"${UUID}"`))).toBe(keyOf(parseIdempotencyKey(UUID)));
  });

  it('whitespace around the quoted form is trimmed', () => {
    expect(keyOf(parseIdempotencyKey(` "${UUID}" `))).toBe(UUID);
  });

  it('an escaped \\" inside the quotes becomes a plain "', () => {
    expect(keyOf(parseIdempotencyKey('"a\\"b"'))).toBe('a"b');
  });

  it('an escaped \\\\ inside the quotes becomes a single \\', () => {
    expect(keyOf(parseIdempotencyKey('"a\\\\b"'))).toBe('a\\b');
  });

  it('a space inside the quotes is allowed (sf-string permits it) and kept', () => {
    expect(keyOf(parseIdempotencyKey('"a b"'))).toBe('a b');
  });

  it('the length limit applies to the unquoted key, not to the header', () => {
    expect(keyOf(parseIdempotencyKey(`"${'k'.repeat(255)}"`))).toHaveLength(255);
    expect(reasonOf(parseIdempotencyKey(`"${'k'.repeat(256)}"`))).toBe('the Idempotency-Key must be at most 255 characters');
    // 254 characters plus one escape pair: 256 in the header, 255 once unescaped.
    expect(keyOf(parseIdempotencyKey(`"${'k'.repeat(254)}\\\\"`))).toHaveLength(255);
  });

  const INVALID_SF_STRING = 'the quoted Idempotency-Key is not a valid structured-field string';

  it.each([
    ['an unterminated quote', '"abc'],
    ['a lone quote', '"'],
    ['a closing quote that is escaped', '"abc\\"'],
    ['trailing junk after the closing quote', '"abc"def'],
    ['a second quoted string', '"abc" "def"'],
    ['an unescaped quote inside', '"ab"c"'],
    ['a backslash escaping anything but " or \\', '"a\\nb"'],
    ['a lone trailing backslash', '"abc\\'],
    ['a tab inside the quotes', '"a\tb"'],
    ['non-ASCII é inside the quotes', '"café"'],
    ['DEL inside the quotes', '"a\x7fb"'],
  ])('%s is rejected as an invalid structured-field string', (_name, header) => {
    expect(reasonOf(parseIdempotencyKey(header))).toBe(INVALID_SF_STRING);
  });
});

describe('KEY_HEADER_PATTERN (the OpenAPI schema of the header)', () => {
  // Both readings a client's regex engine may give it: JavaScript with and without the u flag.
  const patterns = [new RegExp(KEY_HEADER_PATTERN), new RegExp(KEY_HEADER_PATTERN, 'u')];
  // Printable ASCII, a few bytes around it, and long runs, so that both length limits are crossed.
  const character = fc.oneof(fc.constantFrom(' ', '"', '\\', '\t', '\x7f', 'ñ', 'a', '-'), fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)));
  const value = fc.oneof(
    fc.array(character, { maxLength: 20 }).map((chars) => chars.join('')),
    fc.tuple(fc.constantFrom('', '"'), fc.integer({ min: 250, max: 260 }), character, fc.constantFrom('', '"')).map(([open, n, c, close]) => open + c.repeat(n) + close),
  );

  it('accepts exactly the values the parser accepts (trimmed values, as they arrive)', () => {
    fc.assert(
      fc.property(value.filter((text) => text === text.trim()), (text) => {
        for (const pattern of patterns) expect({ text, matches: pattern.test(text) }).toEqual({ text, matches: parseIdempotencyKey(text).ok });
      }),
      { numRuns: 2_000 },
    );
  });

  it('agrees on the limits: 255 characters bare or quoted (escapes count once), not 256', () => {
    for (const text of ['k'.repeat(MAX_KEY_LENGTH), `"${'\\"'.repeat(MAX_KEY_LENGTH)}"`, 'k'.repeat(MAX_KEY_LENGTH + 1), `"${'k'.repeat(MAX_KEY_LENGTH + 1)}"`, '""']) {
      expect({ text, matches: new RegExp(KEY_HEADER_PATTERN).test(text) }).toEqual({ text, matches: parseIdempotencyKey(text).ok });
    }
  });
});
