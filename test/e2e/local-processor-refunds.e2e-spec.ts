import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import type Stripe from 'stripe';
import type { LocalProcessor } from '../../processor/local-processor.js';
import { refundedOf, rejectionOf, stripeAt } from '../support/local-processor.js';
import { type ProcessorUnderTest, startProcessorUnderTest } from '../support/processor-under-test.js';

/** Refunds on the local processor, through the official `stripe` SDK over real HTTP and real PostgreSQL. */
describe('local processor: refunds through the stripe SDK', () => {
  let under: ProcessorUnderTest;
  let processor: LocalProcessor;
  let stripe: Stripe;
  let db: pg.Client;

  beforeAll(async () => {
    under = await startProcessorUnderTest('local_processor_refunds');
    ({ processor, stripe, db } = under);
  });

  afterAll(async () => {
    await under?.close();
  });

  const paidIntent = async (amount: number) =>
    stripe.paymentIntents.create({ amount, currency: 'eur', allowed_payment_method_types: ['card'], payment_method: 'pm_card_visa', confirm: true });

  it('refunds in parts up to the charge; beyond it is a 400 on param amount, and nothing left is charge_already_refunded', async () => {
    const intent = await paidIntent(1_000);
    const first = await stripe.refunds.create({ payment_intent: intent.id, amount: 300, metadata: { reembolso_id: 'r1' }, reason: 'requested_by_customer' }, { idempotencyKey: randomUUID() });
    expect(first).toMatchObject({
      object: 'refund',
      amount: 300,
      currency: 'eur',
      payment_intent: intent.id,
      charge: intent.latest_charge,
      status: 'succeeded',
      metadata: { reembolso_id: 'r1' },
      reason: 'requested_by_customer',
      created: expect.any(Number),
    });
    expect(first.id).toMatch(/^re_[A-Za-z0-9]{24}$/);

    const tooMuch = await rejectionOf(stripe.refunds.create({ payment_intent: intent.id, amount: 1_200 }));
    expect(tooMuch).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, param: 'amount' });
    expect(tooMuch.message).toContain('Refund amount ($12.00) is greater than unrefunded amount on charge ($7.00)');

    const rest = await stripe.refunds.create({ payment_intent: intent.id });
    expect(rest.amount).toBe(700);
    const nothingLeft = await rejectionOf(stripe.refunds.create({ payment_intent: intent.id, amount: 1 }));
    expect(nothingLeft).toMatchObject({ statusCode: 400, code: 'charge_already_refunded' });
    expect(await refundedOf(db, intent.id)).toEqual({ refunds: 2, refundedSum: 1_000, amountRefunded: 1_000 });
  });

  it('a refund of 13 fails at the processor: a 500 stored and replayed under its key, nothing refunded', async () => {
    const intent = await paidIntent(500);
    const key = randomUUID();
    const failed = await rejectionOf(stripe.refunds.create({ payment_intent: intent.id, amount: 13 }, { idempotencyKey: key }));
    expect(failed).toMatchObject({ type: 'StripeAPIError', statusCode: 500, rawType: 'api_error' });
    // A retrying client stops at the replay: Stripe-Should-Retry: false.
    const replayed = await rejectionOf(stripeAt(processor.url, { maxNetworkRetries: 2 }).refunds.create({ payment_intent: intent.id, amount: 13 }, { idempotencyKey: key }));
    expect(replayed).toMatchObject({ statusCode: 500 });
    expect(replayed.headers).toMatchObject({ 'idempotent-replayed': 'true', 'stripe-should-retry': 'false' });
    expect(await refundedOf(db, intent.id)).toEqual({ refunds: 0, refundedSum: 0, amountRefunded: 0 });
    expect((await stripe.refunds.create({ payment_intent: intent.id, amount: 14 })).amount).toBe(14);
  });

  it('a refund replays under its key and refunds once', async () => {
    const intent = await paidIntent(800);
    const key = randomUUID();
    const first = await stripe.refunds.create({ payment_intent: intent.id, amount: 100 }, { idempotencyKey: key });
    const again = await stripe.refunds.create({ payment_intent: intent.id, amount: 100 }, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(await refundedOf(db, intent.id)).toEqual({ refunds: 1, refundedSum: 100, amountRefunded: 100 });
  });

  it('refuses to refund an intent without a successful charge, or one that does not exist', async () => {
    const unpaid = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });
    const notRefundable = await rejectionOf(stripe.refunds.create({ payment_intent: unpaid.id }));
    expect(notRefundable).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error' });
    expect(notRefundable.message).toContain('This PaymentIntent does not have a successful charge to refund.');
    const unknown = await rejectionOf(stripe.refunds.create({ payment_intent: 'pi_unknown' }));
    expect(unknown).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'payment_intent' });
    const noIntent = await rejectionOf(stripe.refunds.create({}));
    expect(noIntent).toMatchObject({ statusCode: 400, param: 'payment_intent' });
  });

  it('retrieves a refund; an unknown one is 404 resource_missing', async () => {
    const intent = await paidIntent(300);
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 50 });
    const { lastResponse: _response, ...retrieved } = await stripe.refunds.retrieve(refund.id);
    const { lastResponse: _created, ...asCreated } = refund;
    expect(retrieved).toEqual(asCreated);
    const unknown = await rejectionOf(stripe.refunds.retrieve('re_unknown'));
    expect(unknown).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });

  it('lists the refunds of one payment intent newest first, auto-paginated by the SDK', async () => {
    const intent = await paidIntent(1_000);
    const other = await paidIntent(1_000);
    await stripe.refunds.create({ payment_intent: other.id, amount: 10 });
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) ids.push((await stripe.refunds.create({ payment_intent: intent.id, amount: 100 + index })).id);

    const firstPage = await stripe.refunds.list({ payment_intent: intent.id, limit: 2 });
    expect(firstPage).toMatchObject({ object: 'list', url: '/v1/refunds', has_more: true });
    const listed: Stripe.Refund[] = [];
    for await (const refund of stripe.refunds.list({ payment_intent: intent.id, limit: 2 })) listed.push(refund);
    expect(listed.map((refund) => refund.id)).toEqual([...ids].reverse());
    expect(listed.every((refund) => refund.payment_intent === intent.id)).toBe(true);
  });
});
