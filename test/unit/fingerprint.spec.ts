import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { fingerprintRequest, type FingerprintInput } from '../../src/idempotency/fingerprint.js';

/** Pure hashing of a request; real: node:crypto and the canonicalize package, nothing faked. */
const order = { numeroOrden: 'ORD-1', monto: 1250, moneda: 'EUR', tarjeta: { token: 'tok_visa', cuotas: [1, 2] } };
const base: FingerprintInput = { method: 'POST', target: '/pagos', body: order };
const fp = (overrides: Partial<FingerprintInput> = {}): string => fingerprintRequest({ ...base, ...overrides });

describe('fingerprintRequest', () => {
  it('is a 64-character lowercase hex SHA-256 digest', () => {
    expect(fp()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is deterministic: the same request gives the same fingerprint', () => {
    expect(fp()).toBe(fp({ body: structuredClone(order) }));
  });

  it('matches SHA-256 of `${METHOD}\\n${target}\\n${RFC 8785 JSON}` computed by hand', () => {
    // Canonical form written by hand: members sorted by key, no whitespace, 2.50 as 2.5.
    const canonical = '{"a":"x","b":[true,null],"c":2.5}';
    const expected = createHash('sha256').update(`POST\n/pagos?x=1\n${canonical}`, 'utf8').digest('hex');
    const body = JSON.parse('{ "c": 2.50, "b": [true, null], "a": "x" }');
    expect(fingerprintRequest({ method: 'post', target: '/pagos?x=1', body })).toBe(expected);
  });

  it('a body with a lone surrogate (no RFC 8785 form) still has a fingerprint, its own, the same on every retry', () => {
    const body = JSON.parse('{"url":"https://a.example/\\ud800"}');
    expect(fp({ body })).toMatch(/^[0-9a-f]{64}$/);
    expect(fp({ body })).toBe(fp({ body: JSON.parse('{"url":"https://a.example/\\ud800"}') }));
    expect(fp({ body })).not.toBe(fp({ body: JSON.parse('{"url":"https://a.example/\\ud801"}') }));
    expect(fp({ body })).not.toBe(fp({ body: { url: 'https://a.example/\\ud800' } }));
  });

  it('an undefined body hashes as an empty canonical body after the target', () => {
    const expected = createHash('sha256').update('GET\n/pagos/1\n', 'utf8').digest('hex');
    expect(fingerprintRequest({ method: 'GET', target: '/pagos/1', body: undefined })).toBe(expected);
  });

  it('key order, at the top and in nested objects, does not change it', () => {
    const reordered = { tarjeta: { cuotas: [1, 2], token: 'tok_visa' }, moneda: 'EUR', monto: 1250, numeroOrden: 'ORD-1' };
    expect(fp({ body: reordered })).toBe(fp());
  });

  it('whitespace in the JSON the client sent does not change it', () => {
    const compact = JSON.parse('{"numeroOrden":"ORD-1","monto":1250,"moneda":"EUR","tarjeta":{"token":"tok_visa","cuotas":[1,2]}}');
    const spaced = JSON.parse('{\n  "numeroOrden" : "ORD-1",\n  "monto" : 1250 ,\n  "moneda":"EUR",\n  "tarjeta" : { "token":"tok_visa", "cuotas":[ 1, 2 ] }\n}');
    expect(fingerprintRequest({ ...base, body: spaced })).toBe(fingerprintRequest({ ...base, body: compact }));
  });

  it('the number representation does not change it: 1 and 1.0 and 1e0 are the same JSON number', () => {
    const one = fp({ body: JSON.parse('{"monto":1}') });
    expect(fp({ body: JSON.parse('{"monto":1.0}') })).toBe(one);
    expect(fp({ body: JSON.parse('{"monto":1e0}') })).toBe(one);
  });

  it.each([
    ['a top-level value', { ...order, monto: 1251 }],
    ['a nested value', { ...order, tarjeta: { token: 'tok_visa', cuotas: [1, 3] } }],
    ['array order', { ...order, tarjeta: { token: 'tok_visa', cuotas: [2, 1] } }],
    ['a value type (number vs string)', { ...order, monto: '1250' }],
    ['an added member', { ...order, extra: null }],
    ['a removed member', { numeroOrden: 'ORD-1', monto: 1250, moneda: 'EUR' }],
  ])('a change of %s in the body changes it', (_name, body) => {
    expect(fp({ body })).not.toBe(fp());
  });

  it('a different method changes it', () => {
    expect(fp({ method: 'PUT' })).not.toBe(fp());
  });

  it('the method is case-insensitive: it is upper-cased before hashing', () => {
    expect(fp({ method: 'post' })).toBe(fp({ method: 'POST' }));
    expect(fp({ method: 'Post' })).toBe(fp({ method: 'POST' }));
  });

  it.each([
    ['a different path', '/pagos/otro'],
    ['an added query string', '/pagos?dry=1'],
    ['a trailing slash', '/pagos/'],
  ])('%s in the target changes it', (_name, target) => {
    expect(fp({ target })).not.toBe(fp());
  });

  it('an undefined body and an empty object {} differ', () => {
    expect(fp({ body: undefined })).not.toBe(fp({ body: {} }));
  });

  it('null, {}, [] and "" as bodies all differ from each other', () => {
    const prints = [null, {}, [], ''].map((body) => fp({ body }));
    expect(new Set(prints).size).toBe(4);
  });
});
