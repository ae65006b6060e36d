import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import type Stripe from 'stripe';
import type { LocalProcessor } from '../../processor/local-processor.js';
import { countCharges, refundedOf, rejectionOf, testHelper } from '../support/local-processor.js';
import { type ProcessorUnderTest, startProcessorUnderTest } from '../support/processor-under-test.js';

/**
 * What happens at the processor away from the API call: 3-D Secure challenges, payments left
 * `processing`, refunds that settle or fail later (through the local-only test helper routes), and
 * Stripe's checks on amounts, currencies and single-use tokens. Real SDK, real HTTP, real PostgreSQL.
 */
describe('local processor: asynchronous outcomes through the stripe SDK', () => {
  let under: ProcessorUnderTest;
  let processor: LocalProcessor;
  let stripe: Stripe;
  let db: pg.Client;

  beforeAll(async () => {
    under = await startProcessorUnderTest('local_processor_async');
    ({ processor, stripe, db } = under);
  });

  afterAll(async () => {
    await under?.close();
  });

  const confirmedWith = (paymentMethod: string, amount = 1_000) =>
    stripe.paymentIntents.create({ amount, currency: 'eur', allowed_payment_method_types: ['card'], payment_method: paymentMethod, confirm: true });
  const withToken = (token: string) => ({ payment_method_data: { type: 'card', card: { token } } }) as Stripe.PaymentIntentConfirmParams;
  const newIntent = () => stripe.paymentIntents.create({ amount: 1_000, currency: 'eur', allowed_payment_method_types: ['card'] });
  const eventTypesOf = async (objectId: string) =>
    (await db.query(`SELECT type FROM procesador_local.events WHERE body::jsonb -> 'data' -> 'object' ->> 'id' = $1 ORDER BY seq`, [objectId])).rows.map((row) => row.type);

  describe('3-D Secure', () => {
    it('every 3-D Secure test value leaves the intent requires_action with use_stripe_sdk and its client_secret, nothing charged', async () => {
      for (const paymentMethod of ['pm_card_authenticationRequired', 'pm_card_threeDSecureRequired', 'pm_card_threeDSecure2Required']) {
        const intent = await confirmedWith(paymentMethod);
        expect(intent).toMatchObject({ status: 'requires_action', next_action: { type: 'use_stripe_sdk', use_stripe_sdk: expect.any(Object) }, amount_received: 0 });
        expect(intent.client_secret).toMatch(new RegExp(`^${intent.id}_secret_[A-Za-z0-9]+$`));
        expect(await countCharges(db, intent.id)).toBe(0);
      }
      for (const token of ['tok_threeDSecureRequired', 'tok_threeDSecure2Required', 'tok_authenticationRequired']) {
        expect((await stripe.paymentIntents.confirm((await newIntent()).id, withToken(token))).status).toBe('requires_action');
      }
    });

    it('a successful challenge charges once and succeeds; the client_secret stays the same', async () => {
      const pending = await confirmedWith('pm_card_threeDSecure2Required');
      const key = randomUUID();
      const authenticated = await testHelper<Stripe.PaymentIntent>(stripe, `payment_intents/${pending.id}/authenticate`, { outcome: 'success' }, key);
      expect(authenticated).toMatchObject({ id: pending.id, status: 'succeeded', amount_received: 1_000, next_action: null, last_payment_error: null, client_secret: pending.client_secret });
      expect(authenticated.latest_charge).toMatch(/^ch_/);
      expect(await countCharges(db, pending.id)).toBe(1);
      const replayed = await testHelper<Stripe.PaymentIntent>(stripe, `payment_intents/${pending.id}/authenticate`, { outcome: 'success' }, key);
      expect(replayed.latest_charge).toBe(authenticated.latest_charge);
      expect(await eventTypesOf(pending.id)).toEqual(['payment_intent.requires_action', 'payment_intent.succeeded']);
    });

    it('a failed challenge returns the intent to requires_payment_method, card detached; it can be paid with another card', async () => {
      const pending = await confirmedWith('pm_card_authenticationRequired');
      const failed = await testHelper<Stripe.PaymentIntent>(stripe, `payment_intents/${pending.id}/authenticate`, { outcome: 'failure' });
      expect(failed).toMatchObject({ status: 'requires_payment_method', payment_method: null, next_action: null });
      expect(failed.last_payment_error).toEqual({
        type: 'card_error',
        code: 'payment_intent_authentication_failure',
        message: expect.stringMatching(/^The provided PaymentMethod has failed authentication\. /),
      });
      expect(await countCharges(db, pending.id)).toBe(0);
      expect(await stripe.paymentIntents.confirm(pending.id, { payment_method: 'pm_card_visa' })).toMatchObject({ status: 'succeeded', last_payment_error: null });
      expect(await eventTypesOf(pending.id)).toEqual(['payment_intent.requires_action', 'payment_intent.payment_failed', 'payment_intent.succeeded']);
    });

    it('authenticating an intent that is not requires_action is 400 payment_intent_unexpected_state; a missing outcome or intent is refused', async () => {
      const unconfirmed = await newIntent();
      const early = await rejectionOf(testHelper(stripe, `payment_intents/${unconfirmed.id}/authenticate`, { outcome: 'success' }));
      expect(early).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, code: 'payment_intent_unexpected_state' });
      expect(early.raw).toMatchObject({ payment_intent: { id: unconfirmed.id, status: 'requires_payment_method' } });
      const paid = await confirmedWith('pm_card_visa');
      const late = await rejectionOf(testHelper(stripe, `payment_intents/${paid.id}/authenticate`, { outcome: 'failure' }));
      expect(late).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
      expect(await rejectionOf(testHelper(stripe, `payment_intents/${paid.id}/authenticate`, {}))).toMatchObject({ statusCode: 400, param: 'outcome' });
      expect(await rejectionOf(testHelper(stripe, 'payment_intents/pi_unknown/authenticate', { outcome: 'success' }))).toMatchObject({ statusCode: 404, code: 'resource_missing' });
      expect(await countCharges(db, paid.id)).toBe(1);
    });
  });

  describe('processing', () => {
    it('pm_card_processing and tok_processing leave the intent processing, nothing charged; it can be neither canceled nor confirmed', async () => {
      const intent = await confirmedWith('pm_card_processing');
      expect(intent).toMatchObject({ status: 'processing', amount_received: 0, next_action: null, latest_charge: null });
      expect(await countCharges(db, intent.id)).toBe(0);
      const cancel = await rejectionOf(stripe.paymentIntents.cancel(intent.id));
      expect(cancel).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
      expect(cancel.raw).toMatchObject({ payment_intent: { status: 'processing' } });
      expect(await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }))).toMatchObject({ code: 'payment_intent_unexpected_state' });
      expect((await stripe.paymentIntents.confirm((await newIntent()).id, withToken('tok_processing'))).status).toBe('processing');
    });

    it('settles as succeeded (one charge) or as a generic decline (requires_payment_method); only a processing intent settles', async () => {
      const toSucceed = await confirmedWith('pm_card_processing');
      const succeeded = await testHelper<Stripe.PaymentIntent>(stripe, `payment_intents/${toSucceed.id}/settle`, { outcome: 'success' });
      expect(succeeded).toMatchObject({ status: 'succeeded', amount_received: 1_000 });
      expect(await countCharges(db, toSucceed.id)).toBe(1);
      expect(await eventTypesOf(toSucceed.id)).toEqual(['payment_intent.processing', 'payment_intent.succeeded']);

      const toFail = await confirmedWith('pm_card_processing');
      const failed = await testHelper<Stripe.PaymentIntent>(stripe, `payment_intents/${toFail.id}/settle`, { outcome: 'failure' });
      expect(failed).toMatchObject({ status: 'requires_payment_method', payment_method: null });
      expect(failed.last_payment_error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
      expect(await countCharges(db, toFail.id)).toBe(0);
      expect(await eventTypesOf(toFail.id)).toEqual(['payment_intent.processing', 'payment_intent.payment_failed']);

      const again = await rejectionOf(testHelper(stripe, `payment_intents/${toSucceed.id}/settle`, { outcome: 'failure' }));
      expect(again).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
      expect(await countCharges(db, toSucceed.id)).toBe(1);
    });
  });

  describe('refunds that settle later', () => {
    it('refundPending: the refund starts pending (its amount held), then settles as succeeded', async () => {
      const intent = await confirmedWith('pm_card_refundPending');
      expect(intent.status).toBe('succeeded');
      const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 400 });
      expect(refund).toMatchObject({ status: 'pending', failure_reason: null, amount: 400 });
      expect(await refundedOf(db, intent.id)).toMatchObject({ amountRefunded: 400 });
      const settled = await testHelper<Stripe.Refund>(stripe, `refunds/${refund.id}/settle`, { outcome: 'succeeded' });
      expect(settled).toMatchObject({ id: refund.id, status: 'succeeded', failure_reason: null });
      expect(await stripe.refunds.retrieve(refund.id)).toMatchObject({ status: 'succeeded' });
      expect(await eventTypesOf(refund.id)).toEqual(['refund.created', 'refund.updated', 'charge.refund.updated']);
      const again = await rejectionOf(testHelper(stripe, `refunds/${refund.id}/settle`, { outcome: 'failed' }));
      expect(again).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error' });
    });

    it('refundPending settled as failed gives the amount back', async () => {
      const intent = await confirmedWith('tok_refundPending', 600);
      const refund = await stripe.refunds.create({ payment_intent: intent.id });
      expect(refund.status).toBe('pending');
      const failed = await testHelper<Stripe.Refund>(stripe, `refunds/${refund.id}/settle`, { outcome: 'failed', failure_reason: 'lost_or_stolen_card' });
      expect(failed).toMatchObject({ status: 'failed', failure_reason: 'lost_or_stolen_card' });
      expect(await refundedOf(db, intent.id)).toEqual({ refunds: 1, refundedSum: 600, amountRefunded: 0 });
    });

    it('refundFail: the refund starts succeeded, later fails (refund.failed), and the charge can be refunded again', async () => {
      const intent = await confirmedWith('pm_card_refundFail', 800);
      const refund = await stripe.refunds.create({ payment_intent: intent.id });
      expect(refund).toMatchObject({ status: 'succeeded', amount: 800 });
      expect(await rejectionOf(stripe.refunds.create({ payment_intent: intent.id, amount: 1 }))).toMatchObject({ code: 'charge_already_refunded' });
      const failed = await testHelper<Stripe.Refund>(stripe, `refunds/${refund.id}/settle`, { outcome: 'failed' });
      expect(failed).toMatchObject({ status: 'failed', failure_reason: 'expired_or_canceled_card' });
      expect(await refundedOf(db, intent.id)).toMatchObject({ amountRefunded: 0 });
      expect(await eventTypesOf(refund.id)).toEqual(['refund.created', 'refund.updated', 'charge.refund.updated', 'refund.failed']);
      expect((await stripe.refunds.create({ payment_intent: intent.id })).amount).toBe(800);
    });

    it('an ordinary succeeded refund is final: settling it as failed is refused', async () => {
      const intent = await confirmedWith('pm_card_visa');
      const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 100 });
      expect(refund).toMatchObject({ status: 'succeeded', failure_reason: null });
      expect(await rejectionOf(testHelper(stripe, `refunds/${refund.id}/settle`, { outcome: 'failed' }))).toMatchObject({ statusCode: 400 });
      expect(await rejectionOf(testHelper(stripe, 'refunds/re_unknown/settle', { outcome: 'failed' }))).toMatchObject({ statusCode: 404, code: 'resource_missing' });
      expect(await refundedOf(db, intent.id)).toMatchObject({ amountRefunded: 100 });
    });
  });

  describe("Stripe's checks", () => {
    it('amount below 50 or above 99999999 and an unsupported currency are 400s, not stored: the key works afterwards', async () => {
      const key = randomUUID();
      const small = await rejectionOf(stripe.paymentIntents.create({ amount: 49, currency: 'eur' }, { idempotencyKey: key }));
      expect(small).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, code: 'amount_too_small', param: 'amount' });
      expect(small.raw).toMatchObject({ message: 'Amount must be at least €0.50 eur' });
      const large = await rejectionOf(stripe.paymentIntents.create({ amount: 100_000_000, currency: 'usd' }, { idempotencyKey: key }));
      expect(large).toMatchObject({ statusCode: 400, code: 'amount_too_large', param: 'amount' });
      const currency = await rejectionOf(stripe.paymentIntents.create({ amount: 1_000, currency: 'xyz' }, { idempotencyKey: key }));
      expect(currency).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error', param: 'currency' });
      expect(currency.raw).toMatchObject({ message: 'Invalid currency: xyz' });
      expect((await stripe.paymentIntents.create({ amount: 50, currency: 'eur' }, { idempotencyKey: key })).amount).toBe(50);
      expect((await stripe.paymentIntents.create({ amount: 99_999_999, currency: 'jpy' })).currency).toBe('jpy');
    });

    it('a real-looking token is single-use: a second confirmation of any intent with it is 400 token_already_used; named test tokens are reusable', async () => {
      const token = `tok_1${randomUUID().replace(/-/g, '').slice(0, 20)}`;
      expect((await stripe.paymentIntents.confirm((await newIntent()).id, withToken(token))).status).toBe('succeeded');
      const other = await newIntent();
      const reused = await rejectionOf(stripe.paymentIntents.confirm(other.id, withToken(token), { idempotencyKey: randomUUID() }));
      expect(reused).toMatchObject({ statusCode: 400, code: 'token_already_used', param: 'payment_method_data[card][token]' });
      expect(reused.message).toContain(`You cannot use a Stripe token more than once: ${token}`);
      expect(await countCharges(db, other.id)).toBe(0);
      for (let round = 0; round < 2; round++) expect((await stripe.paymentIntents.confirm((await newIntent()).id, withToken('tok_visa'))).status).toBe('succeeded');
    });

    it('one token confirming five intents at once: exactly one charges', async () => {
      const token = `tok_1${randomUUID().replace(/-/g, '').slice(0, 20)}`;
      const intents = await Promise.all(Array.from({ length: 5 }, () => newIntent()));
      const attempts = await Promise.all(intents.map((intent) => stripe.paymentIntents.confirm(intent.id, withToken(token)).then(() => 'succeeded', (error: Stripe.errors.StripeError) => error.code)));
      expect(attempts.sort()).toEqual(['succeeded', 'token_already_used', 'token_already_used', 'token_already_used', 'token_already_used']);
      const { rows } = await db.query('SELECT count(*)::int AS n FROM procesador_local.charges WHERE payment_intent = ANY($1)', [intents.map((intent) => intent.id)]);
      expect(rows[0].n).toBe(1);
    });
  });
});
