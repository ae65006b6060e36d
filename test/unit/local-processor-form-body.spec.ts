import { describe, expect, it } from '@jest/globals';
import { FormSyntaxError, parseForm } from '../../processor/form-body.js';
import { requestHash } from '../../processor/idempotency-keys.js';

/** The local processor's reading of Stripe's bracket form encoding, and its request fingerprint (pure, no server). */
describe('parseForm', () => {
  it('nests brackets into objects and indexed brackets into arrays, as the stripe SDK encodes them', () => {
    const body =
      'amount=2500&currency=eur&metadata[pago_id]=p%201&payment_method_types[0]=card&payment_method_types[1]=sepa_debit' +
      '&payment_method_data[type]=card&payment_method_data[card][token]=tok_visa&automatic_payment_methods[enabled]=true&description=a+b';
    expect(parseForm(body)).toEqual({
      amount: '2500',
      currency: 'eur',
      metadata: { pago_id: 'p 1' },
      payment_method_types: ['card', 'sepa_debit'],
      payment_method_data: { type: 'card', card: { token: 'tok_visa' } },
      automatic_payment_methods: { enabled: 'true' },
      description: 'a b',
    });
  });

  it('accepts percent-encoded brackets, appends on [] and compacts sparse indexes in order', () => {
    expect(parseForm('expand%5B0%5D=a&types[]=x&types[]=y&list[5]=late&list[1]=early')).toEqual({ expand: ['a'], types: ['x', 'y'], list: ['early', 'late'] });
  });

  it('reads an empty body or query as no parameters', () => {
    expect(parseForm('')).toEqual({});
  });

  it.each([
    ['a prototype key', 'metadata[__proto__][polluted]=yes'],
    ['an unclosed bracket', 'metadata[pago_id=1'],
    ['a scalar then an object under one name', 'metadata=x&metadata[a]=1'],
    ['an array then an object under one name', 'a[0]=x&a[b]=y'],
    ['a huge array index', 'a[99999999]=x'],
  ])('rejects %s', (_case, body) => {
    expect(() => parseForm(body)).toThrow(FormSyntaxError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('requestHash', () => {
  it('ignores parameter order and tells apart method, path and values', () => {
    const hash = requestHash('POST', '/v1/refunds', parseForm('payment_intent=pi_1&amount=5&metadata[a]=1&metadata[b]=2'));
    expect(requestHash('POST', '/v1/refunds', parseForm('metadata[b]=2&amount=5&metadata[a]=1&payment_intent=pi_1'))).toBe(hash);
    expect(requestHash('POST', '/v1/refunds', parseForm('payment_intent=pi_1&amount=6&metadata[a]=1&metadata[b]=2'))).not.toBe(hash);
    expect(requestHash('POST', '/v1/payment_intents', parseForm('payment_intent=pi_1&amount=5&metadata[a]=1&metadata[b]=2'))).not.toBe(hash);
  });
});
