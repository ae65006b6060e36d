import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayIndeterminateError, RefundRefusedError } from '../../src/gateway/payment-gateway.js';
import { StripePaymentGateway } from '../../src/gateway/stripe-payment-gateway.js';
import { startLocalProcessor, type LocalProcessor } from '../../processor/local-processor.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * The adapter's contract, over real HTTP with the official SDK, against whatever STRIPE_API_URL and
 * STRIPE_SECRET_KEY point at: with PAGOS_CONTRACT_STRIPE_SECRET_KEY=sk_test_… set, Stripe's own
 * test mode (see the README); otherwise the local processor, started here on its own database.
 * Only test-mode values are used: nothing here moves real money.
 */
const STRIPE_TEST_KEY = process.env.PAGOS_CONTRACT_STRIPE_SECRET_KEY;

describe(`the Stripe adapter's contract (${STRIPE_TEST_KEY ? 'Stripe test mode' : 'the local processor'})`, () => {
  let local: LocalProcessor | undefined;
  let gateway: StripePaymentGateway;
  const operation = (): Record<string, string> => ({ operation_id: randomUUID() });
  const key = (step: string): string => `pagos-contract-${randomUUID()}-${step}`;

  beforeAll(async () => {
    if (STRIPE_TEST_KEY && !STRIPE_TEST_KEY.startsWith('sk_test_')) throw new Error('the contract test runs against test mode only (sk_test_…)');
    const apiUrl = STRIPE_TEST_KEY ? new URL(process.env.STRIPE_API_URL ?? 'https://api.stripe.com') : undefined;
    local = apiUrl ? undefined : await startLocalProcessor({ databaseUrl: await createTestDatabase('stripe_contract') });
    gateway = new StripePaymentGateway({
      secretKey: STRIPE_TEST_KEY ?? 'sk_test_contract',
      apiUrl: apiUrl ?? new URL(local!.url),
      timeoutMs: 20_000,
      maxNetworkRetries: 2,
    });
  });

  afterAll(async () => {
    await local?.close();
  });

  const intent = (amount = 1999) => gateway.createIntent({ key: key('create'), amount, currency: 'EUR', metadata: operation() });

  it('creates an intent that moves no money until it is confirmed, then charges it once', async () => {
    const created = await intent();
    expect(created).toEqual({ id: expect.stringMatching(/^pi_/), status: 'confirmable' });
    const confirmKey = key('confirm');
    const confirmed = await gateway.confirmIntent({ key: confirmKey, intentId: created.id, paymentToken: 'pm_card_visa' });
    expect(confirmed).toEqual({ id: created.id, status: 'succeeded' });
    // The same key and parameters replay the answer; the intent is retrieved by its id.
    expect(await gateway.confirmIntent({ key: confirmKey, intentId: created.id, paymentToken: 'pm_card_visa' })).toEqual(confirmed);
    expect(await gateway.retrieveIntent(created.id)).toEqual(confirmed);
    // A confirmation under another key can't charge it again.
    expect(await gateway.confirmIntent({ key: key('confirm'), intentId: created.id, paymentToken: 'pm_card_visa' })).toEqual(confirmed);
  });

  it('confirms a legacy card token as well', async () => {
    const created = await intent();
    expect(await gateway.confirmIntent({ key: key('confirm'), intentId: created.id, paymentToken: 'tok_visa' })).toEqual({ id: created.id, status: 'succeeded' });
  });

  it('a declined card is a state, not an error: nothing charged, and the intent says so when retrieved', async () => {
    const created = await intent();
    const declined = await gateway.confirmIntent({ key: key('confirm'), intentId: created.id, paymentToken: 'pm_card_chargeDeclined' });
    expect(declined).toEqual({ id: created.id, status: 'declined', declinedFor: 'card' });
    expect(await gateway.retrieveIntent(created.id)).toEqual(declined);
  });

  it('a card that needs authentication asks for it; canceling ends it, and a canceled intent stays canceled', async () => {
    const created = await intent();
    expect(await gateway.confirmIntent({ key: key('confirm'), intentId: created.id, paymentToken: 'pm_card_authenticationRequired' }))
      .toEqual({ id: created.id, status: 'requires_action', clientSecret: expect.stringMatching(new RegExp(`^${created.id}_secret_`)) });
    const cancelKey = key('cancel');
    expect(await gateway.cancelIntent(created.id, cancelKey)).toEqual({ id: created.id, status: 'canceled' });
    // Canceling again, or a cancel that finds it charged, answers what the intent is.
    expect(await gateway.cancelIntent(created.id, key('cancel'))).toEqual({ id: created.id, status: 'canceled' });
  });

  it('a cancel that loses to a confirmation answers what the confirmation did', async () => {
    const created = await intent();
    await gateway.confirmIntent({ key: key('confirm'), intentId: created.id, paymentToken: 'pm_card_visa' });
    expect(await gateway.cancelIntent(created.id, key('cancel'))).toEqual({ id: created.id, status: 'succeeded' });
  });

  it('refunds part of a charge once per key, finds it by its metadata, and refuses more than was charged', async () => {
    const created = await intent(1000);
    await gateway.confirmIntent({ key: key('confirm'), intentId: created.id, paymentToken: 'pm_card_visa' });
    const refundKey = key('refund');
    const metadata = { operation_id: randomUUID() };
    const refund = await gateway.refund({ key: refundKey, intentId: created.id, amount: 400, metadata });
    expect(refund).toEqual({ id: expect.stringMatching(/^re_/), intentId: created.id, amount: 400, status: 'succeeded', metadata });
    expect(await gateway.refund({ key: refundKey, intentId: created.id, amount: 400, metadata })).toEqual(refund);
    expect(await gateway.listRefunds(created.id)).toEqual([refund]);
    expect(await gateway.retrieveRefund(refund.id)).toEqual(refund);
    await expect(gateway.refund({ key: key('refund'), intentId: created.id, amount: 700, metadata: operation() })).rejects.toThrow(RefundRefusedError);
    expect(await gateway.listRefunds(created.id)).toEqual([refund]);
  });

  it('an unknown intent is an error of ours, not an indeterminate outcome', async () => {
    const unknown = gateway.retrieveIntent('pi_doesnotexist000000000000');
    await expect(unknown).rejects.toThrow();
    await expect(unknown).rejects.not.toBeInstanceOf(GatewayIndeterminateError);
  });

  it('leaves stack traces as they were, around a call that fails as around one that succeeds', async () => {
    const limit = Error.stackTraceLimit;
    await expect(gateway.retrieveIntent('pi_doesnotexist000000000000')).rejects.toThrow();
    expect(Error.stackTraceLimit).toBe(limit);
    await intent();
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('still traced').stack).toContain('stripe-contract.e2e-spec');
  });
});
