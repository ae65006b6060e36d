import { describe, expect, it } from '@jest/globals';
import { ApiTokenVerifier } from '../../src/auth/api-token-verifier.js';

/** Pure token lookup; real: node:crypto's SHA-256 and timingSafeEqual. */
const ALICE_TOKEN = 'alice-token-0123456789abcdef';
const BOB_TOKEN = 'bob-token-0123456789abcdef-much-longer-than-alice';

const verifier = new ApiTokenVerifier([
  { clientId: 'alice', token: ALICE_TOKEN },
  { clientId: 'bob', token: BOB_TOKEN },
]);

describe('ApiTokenVerifier', () => {
  it('maps each configured token to its own client id', () => {
    expect(verifier.clientIdFor(ALICE_TOKEN)).toBe('alice');
    expect(verifier.clientIdFor(BOB_TOKEN)).toBe('bob');
  });

  it('an unknown token maps to no client', () => {
    expect(verifier.clientIdFor('mallory-token-0123456789abcdef')).toBeUndefined();
  });

  it('an empty token maps to no client', () => {
    expect(verifier.clientIdFor('')).toBeUndefined();
  });

  it('a prefix of a real token maps to no client', () => {
    expect(verifier.clientIdFor(ALICE_TOKEN.slice(0, -1))).toBeUndefined();
    expect(verifier.clientIdFor(ALICE_TOKEN.slice(0, 1))).toBeUndefined();
  });

  it('a real token with anything appended maps to no client', () => {
    expect(verifier.clientIdFor(`${ALICE_TOKEN}x`)).toBeUndefined();
  });

  it('the comparison is case-sensitive and exact', () => {
    expect(verifier.clientIdFor(ALICE_TOKEN.toUpperCase())).toBeUndefined();
    expect(verifier.clientIdFor(` ${ALICE_TOKEN}`)).toBeUndefined();
  });

  it('tokens of any length, shorter or far longer than the configured ones, do not throw', () => {
    for (const token of ['x', 'y'.repeat(10_000), '💳'.repeat(50), '\x00']) {
      expect(() => verifier.clientIdFor(token)).not.toThrow();
      expect(verifier.clientIdFor(token)).toBeUndefined();
    }
  });

  it('with no clients configured every token maps to no client', () => {
    expect(new ApiTokenVerifier([]).clientIdFor(ALICE_TOKEN)).toBeUndefined();
  });
});
