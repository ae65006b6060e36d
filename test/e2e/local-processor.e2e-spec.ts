import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import type Stripe from 'stripe';
import type { LocalProcessor } from '../../processor/local-processor.js';
import { addFault, clearFaults, countCharges, rejectionOf, stripeAt, waitUntil } from '../support/local-processor.js';
import { type ProcessorUnderTest, startProcessorUnderTest } from '../support/processor-under-test.js';

/**
 * The local processor (in this process, real HTTP, real PostgreSQL) driven by the official `stripe`
 * SDK: PaymentIntents, Stripe's idempotency keys, and the injected faults.
 */
describe('local processor: payment intents through the stripe SDK', () => {
  let under: ProcessorUnderTest;
  let processor: LocalProcessor;
  let stripe: Stripe;
  let db: pg.Client;

  beforeAll(async () => {
    under = await startProcessorUnderTest('local_processor', { faultInjection: true });
    ({ processor, stripe, db } = under);
  });

  afterEach(async () => clearFaults(processor.url));

  afterAll(async () => {
    await under?.close();
  });

  const newIntent = (amount = 2_500) =>
    stripe.paymentIntents.create({ amount, currency: 'EUR', allowed_payment_method_types: ['card'], metadata: { pago_id: randomUUID() } });

  it('creates an intent awaiting a payment method, then confirms it: succeeded, one charge row', async () => {
    const created = await newIntent();
    expect(created).toMatchObject({ object: 'payment_intent', amount: 2_500, currency: 'eur', status: 'requires_payment_method', amount_received: 0, livemode: false });
    expect(created.id).toMatch(/^pi_[A-Za-z0-9]{24}$/);
    expect(created.lastResponse.requestId).toMatch(/^req_/);

    const confirmed = await stripe.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: randomUUID() });
    expect(confirmed).toMatchObject({ status: 'succeeded', amount_received: 2_500, payment_method: 'pm_card_visa', last_payment_error: null });
    expect(confirmed.latest_charge).toMatch(/^ch_/);
    expect(await countCharges(db, created.id)).toBe(1);
    expect(await stripe.paymentIntents.retrieve(created.id)).toMatchObject({ status: 'succeeded', latest_charge: confirmed.latest_charge, metadata: created.metadata });
  });

  it('creates and confirms in one call (confirm=true), with a legacy card token becoming a pm_ id', async () => {
    const intent = await stripe.paymentIntents.create({ amount: 990, currency: 'usd', automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    const confirmed = await stripe.paymentIntents.confirm(intent.id, { payment_method_data: { type: 'card', card: { token: 'tok_visa' } } } as Stripe.PaymentIntentConfirmParams);
    expect(confirmed.status).toBe('succeeded');
    expect(confirmed.payment_method).toMatch(/^pm_[A-Za-z0-9]{24}$/);
    const tokenAtCreation = await stripe.paymentIntents.create({
      amount: 300,
      currency: 'eur',
      payment_method_data: { type: 'card', card: { token: 'tok_mastercard' } },
      confirm: true,
    } as Stripe.PaymentIntentCreateParams);
    expect(tokenAtCreation.status).toBe('succeeded');

    const oneCall = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', payment_method: 'pm_card_visa', confirm: true, allowed_payment_method_types: ['card'] });
    expect(oneCall.status).toBe('succeeded');
    expect(await countCharges(db, oneCall.id)).toBe(1);
    const withMethod = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', payment_method: 'pm_card_visa' });
    expect(withMethod.status).toBe('requires_confirmation');
  });

  it('shows the payment method types as listed (under either parameter name) or chosen automatically', async () => {
    const listed = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', allowed_payment_method_types: ['card'] });
    expect(listed).toMatchObject({ allowed_payment_method_types: ['card'], payment_method_types: ['card'], automatic_payment_methods: null });
    // The parameter's name before API version 2026-11-18, which older clients send.
    const legacy = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', payment_method_types: ['card'] } as Stripe.PaymentIntentCreateParams);
    expect(legacy).toMatchObject({ allowed_payment_method_types: ['card'], payment_method_types: ['card'] });
    const automatic = await stripe.paymentIntents.create({ amount: 100, currency: 'eur', automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    expect(automatic).toMatchObject({ allowed_payment_method_types: null, payment_method_types: ['card'], automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    const byDefault = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' });
    expect(byDefault.automatic_payment_methods).toEqual({ enabled: true });
  });

  it('a decline is a 402 StripeCardError, leaves the intent awaiting a payment method, and replays under its key', async () => {
    const intent = await newIntent();
    const key = randomUUID();
    const declined = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_chargeDeclinedInsufficientFunds' }, { idempotencyKey: key }));
    expect(declined).toMatchObject({ type: 'StripeCardError', statusCode: 402, code: 'card_declined', decline_code: 'insufficient_funds' });
    expect(declined.message).toContain('Your card was declined.');
    const lastPaymentError = { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card was declined.' };
    expect(declined.raw).toMatchObject({ payment_intent: { id: intent.id, status: 'requires_payment_method', last_payment_error: lastPaymentError } });
    expect(declined.headers!['idempotent-replayed']).toBeUndefined();

    const replayed = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_chargeDeclinedInsufficientFunds' }, { idempotencyKey: key }));
    expect(replayed).toMatchObject({ type: 'StripeCardError', statusCode: 402, code: 'card_declined' });
    expect(replayed.headers!['idempotent-replayed']).toBe('true');
    expect(await stripe.paymentIntents.retrieve(intent.id)).toMatchObject({ status: 'requires_payment_method', last_payment_error: lastPaymentError });
    expect(await countCharges(db, intent.id)).toBe(0);

    const tokenDecline = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method_data: { type: 'card', card: { token: 'tok_chargeDeclined' } } } as Stripe.PaymentIntentConfirmParams));
    expect(tokenDecline).toMatchObject({ statusCode: 402, decline_code: 'generic_decline' });
  });

  it('a processing error charges nothing, and a later confirmation under a new key charges once', async () => {
    const intent = await newIntent();
    const failed = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method_data: { type: 'card', card: { token: 'tok_error' } } } as Stripe.PaymentIntentConfirmParams));
    expect(failed).toMatchObject({ type: 'StripeCardError', statusCode: 402, code: 'processing_error' });
    expect(failed.raw).toMatchObject({ payment_intent: { status: 'requires_payment_method', last_payment_error: { code: 'processing_error' } } });
    expect(await countCharges(db, intent.id)).toBe(0);

    const retried = await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_mastercard' }, { idempotencyKey: randomUUID() });
    expect(retried).toMatchObject({ status: 'succeeded', last_payment_error: null });
    expect(await countCharges(db, intent.id)).toBe(1);
  });

  it('authentication required leaves the intent in requires_action; it can then be canceled, once', async () => {
    const intent = await newIntent();
    const pending = await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_authenticationRequired' });
    expect(pending).toMatchObject({ status: 'requires_action', next_action: { type: 'use_stripe_sdk' } });
    expect(await countCharges(db, intent.id)).toBe(0);

    const canceled = await stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'abandoned' });
    expect(canceled).toMatchObject({ status: 'canceled', cancellation_reason: 'abandoned', next_action: null });
    expect(canceled.canceled_at).toEqual(expect.any(Number));
    const again = await rejectionOf(stripe.paymentIntents.cancel(intent.id));
    expect(again).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, code: 'payment_intent_unexpected_state' });
    expect(again.raw).toMatchObject({ payment_intent: { status: 'canceled' } });
  });

  it('a succeeded intent can be neither confirmed again (new key) nor canceled: 400 unexpected state, stored', async () => {
    const intent = await newIntent();
    await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' });
    const key = randomUUID();
    const confirmAgain = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key }));
    expect(confirmAgain).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, code: 'payment_intent_unexpected_state' });
    expect(confirmAgain.raw).toMatchObject({ payment_intent: { id: intent.id, status: 'succeeded' } });
    const replayed = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key }));
    expect(replayed.headers!['idempotent-replayed']).toBe('true');

    const cancel = await rejectionOf(stripe.paymentIntents.cancel(intent.id));
    expect(cancel).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
    expect(await countCharges(db, intent.id)).toBe(1);
  });

  it('a key reused with other parameters or on another path is a 400 StripeIdempotencyError, not stored', async () => {
    const intent = await newIntent();
    const key = randomUUID();
    await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key });
    const otherParams = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_amex' }, { idempotencyKey: key }));
    expect(otherParams).toMatchObject({ type: 'StripeIdempotencyError', statusCode: 400, rawType: 'idempotency_error' });
    expect(otherParams.message).toContain(`Try using a key other than '${key}'`);
    const otherPath = await rejectionOf(stripe.paymentIntents.cancel(intent.id, {}, { idempotencyKey: key }));
    expect(otherPath).toMatchObject({ type: 'StripeIdempotencyError' });
    // Parameter order does not matter: the same parameters in another order replay.
    const created = await stripe.paymentIntents.create({ amount: 500, currency: 'eur', metadata: { a: '1', b: '2' } }, { idempotencyKey: `${key}-create` });
    const sameInOtherOrder = await stripe.paymentIntents.create({ metadata: { b: '2', a: '1' }, currency: 'eur', amount: 500 }, { idempotencyKey: `${key}-create` });
    expect(sameInOtherOrder.id).toBe(created.id);
    expect(sameInOtherOrder.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it('validation errors, unknown ids and unknown payment methods are not stored: the key works again afterwards', async () => {
    const key = randomUUID();
    const invalid = await rejectionOf(stripe.paymentIntents.create({ amount: 0, currency: 'eur' }, { idempotencyKey: key }));
    expect(invalid).toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400, param: 'amount' });
    const missing = await rejectionOf(stripe.paymentIntents.create({ currency: 'eur' } as Stripe.PaymentIntentCreateParams, { idempotencyKey: key }));
    expect(missing).toMatchObject({ statusCode: 400, param: 'amount' });
    expect(missing.message).toContain('Missing required param: amount.');
    const { rowCount } = await db.query('SELECT 1 FROM procesador_local.idempotency_keys WHERE key = $1', [key]);
    expect(rowCount).toBe(0);
    const created = await stripe.paymentIntents.create({ amount: 100, currency: 'eur' }, { idempotencyKey: key });
    expect(created.status).toBe('requires_payment_method');

    const unknownIntent = await rejectionOf(stripe.paymentIntents.confirm('pi_doesnotexist', { payment_method: 'pm_card_visa' }));
    expect(unknownIntent).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'intent' });
    expect(unknownIntent.message).toContain("No such payment_intent: 'pi_doesnotexist'");
    const confirmKey = randomUUID();
    const unknownMethod = await rejectionOf(stripe.paymentIntents.confirm(created.id, { payment_method: 'card_123' }, { idempotencyKey: confirmKey }));
    expect(unknownMethod).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'payment_method' });
    const unknownParam = await rejectionOf(stripe.paymentIntents.create({ amount: 100, currency: 'eur', flavour: 'x' } as Stripe.PaymentIntentCreateParams));
    expect(unknownParam.message).toContain('Received unknown parameter: flavour');
    expect(await stripe.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: confirmKey })).toMatchObject({ status: 'succeeded' });
  });

  it('speaks Stripe at the edges: 401 for a key that is not sk_test_, 404 for unknown routes, Request-Id on every answer', async () => {
    const live = await rejectionOf(stripe.paymentIntents.list({}, { apiKey: 'sk_live_abcdefghijklmnop' }));
    expect(live).toMatchObject({ type: 'StripeAuthenticationError', statusCode: 401 });
    expect(live.message).toContain('Invalid API Key provided: sk_live_***mnop');
    const unknown = await fetch(`${processor.url}/v1/customers`, { headers: { authorization: 'Bearer sk_test_x' } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { type: 'invalid_request_error', message: 'Unrecognized request URL (GET: /v1/customers).' } });
    expect(unknown.headers.get('request-id')).toMatch(/^req_[A-Za-z0-9]{24}$/);
  });

  it('lists intents newest first, and the SDK auto-paginates both ways', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) ids.push((await newIntent(100 + index)).id);
    const page = await stripe.paymentIntents.list({ limit: 3 });
    expect(page).toMatchObject({ object: 'list', url: '/v1/payment_intents', has_more: true });
    expect(page.data.map((intent) => intent.id)).toEqual(ids.slice(-3).reverse());

    const olderThanNewest: string[] = [];
    for await (const intent of stripe.paymentIntents.list({ limit: 2, starting_after: ids[4] })) olderThanNewest.push(intent.id);
    expect(olderThanNewest.slice(0, 4)).toEqual(ids.slice(0, 4).reverse());
    const total = (await db.query('SELECT count(*)::int AS n FROM procesador_local.payment_intents')).rows[0].n;
    expect(olderThanNewest).toHaveLength(total - 1);

    // Paging backwards, the SDK hands the items oldest first.
    const newerThanOldest: string[] = [];
    for await (const intent of stripe.paymentIntents.list({ limit: 2, ending_before: ids[0] })) newerThanOldest.push(intent.id);
    expect(newerThanOldest).toEqual(ids.slice(1));
  });

  describe('injected faults', () => {
    it('drop_after: the charge is made and the answer lost; the SDK resends the same key and gets the replayed success', async () => {
      const intent = await newIntent();
      await addFault(processor.url, { operation: 'confirm_intent', fault: 'drop_after' });
      const retrying = stripeAt(processor.url, { maxNetworkRetries: 2 });
      const confirmed = await retrying.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: randomUUID() });
      expect(confirmed.status).toBe('succeeded');
      expect(confirmed.lastResponse.headers['idempotent-replayed']).toBe('true');
      expect(await countCharges(db, intent.id)).toBe(1);
    });

    it('error_after: the charge is made, a 500 is answered, stored and replayed (never retried into a second charge)', async () => {
      const intent = await newIntent();
      const key = randomUUID();
      await addFault(processor.url, { operation: 'confirm_intent', fault: 'error_after' });
      const failed = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key }));
      expect(failed).toMatchObject({ type: 'StripeAPIError', statusCode: 500, rawType: 'api_error' });
      expect(await countCharges(db, intent.id)).toBe(1);
      expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');

      const replayed = await rejectionOf(stripeAt(processor.url, { maxNetworkRetries: 2 }).paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key }));
      expect(replayed).toMatchObject({ statusCode: 500 });
      expect(replayed.headers).toMatchObject({ 'idempotent-replayed': 'true', 'stripe-should-retry': 'false' });
      expect(await countCharges(db, intent.id)).toBe(1);
    });

    it('error_before: nothing is charged, the 500 replays under its key, and a new key then charges once', async () => {
      const intent = await newIntent();
      const key = randomUUID();
      await addFault(processor.url, { operation: 'confirm_intent', fault: 'error_before' });
      expect(await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key }))).toMatchObject({ statusCode: 500 });
      const replayed = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key }));
      expect(replayed.headers!['idempotent-replayed']).toBe('true');
      expect(await countCharges(db, intent.id)).toBe(0);
      expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe('requires_payment_method');
      await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: randomUUID() });
      expect(await countCharges(db, intent.id)).toBe(1);
    });

    it('a key in flight answers 409 idempotency_key_in_use (not stored); the first request completes and then replays', async () => {
      const intent = await newIntent();
      const key = randomUUID();
      await addFault(processor.url, { operation: 'confirm_intent', fault: 'latency', latencyMs: 1_500 });
      const first = stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key });
      await waitUntil(async () => (await db.query("SELECT 1 FROM procesador_local.idempotency_keys WHERE key = $1 AND status = 'in_flight'", [key])).rowCount === 1);
      const second = await rejectionOf(stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key }));
      expect(second).toMatchObject({ type: 'StripeAPIError', statusCode: 409, code: 'idempotency_key_in_use' });
      expect((await first).status).toBe('succeeded');
      const replayed = await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key });
      expect(replayed.lastResponse.headers['idempotent-replayed']).toBe('true');
      expect(await countCharges(db, intent.id)).toBe(1);
    });

    it('latency beyond the client timeout: the client gives up, the work is still done', async () => {
      const intent = await newIntent();
      await addFault(processor.url, { operation: 'confirm_intent', fault: 'latency', latencyMs: 800 });
      const impatient = stripeAt(processor.url, { timeout: 200 });
      const timedOut = await rejectionOf(impatient.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: randomUUID() }));
      expect(timedOut.type).toBe('StripeConnectionError');
      await waitUntil(async () => (await countCharges(db, intent.id)) === 1);
      expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');
    });

    it('faults apply in order to their operation only, and a replay consumes none', async () => {
      const intent = await newIntent();
      const key = randomUUID();
      await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key });
      await addFault(processor.url, { operation: 'confirm_intent', fault: 'error_before' });
      await addFault(processor.url, { operation: 'retrieve_intent', fault: 'error_before' });
      const replayed = await stripe.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key });
      expect(replayed.lastResponse.headers['idempotent-replayed']).toBe('true');
      const pending = await (await fetch(`${processor.url}/_faults`)).json();
      expect(pending).toEqual({
        pending: [
          { operation: 'confirm_intent', fault: 'error_before', latencyMs: 0 },
          { operation: 'retrieve_intent', fault: 'error_before', latencyMs: 0 },
        ],
      });
      expect(await rejectionOf(stripe.paymentIntents.retrieve(intent.id))).toMatchObject({ statusCode: 500 });
      expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');
    });

    it('refuse: connections are refused (StripeConnectionError, ECONNREFUSED) for a while, then it works again', async () => {
      const intent = await newIntent();
      const refused = await fetch(`${processor.url}/_faults/refuse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ms: 1_000 }) });
      expect(refused.status).toBe(202);
      const down = await rejectionOf(stripe.paymentIntents.retrieve(intent.id));
      expect(down.type).toBe('StripeConnectionError');
      expect((down.detail as NodeJS.ErrnoException | undefined)?.code).toBe('ECONNREFUSED');
      await waitUntil(async () => stripe.paymentIntents.retrieve(intent.id).then(() => true, () => false), 5_000);
      expect((await stripe.paymentIntents.retrieve(intent.id)).id).toBe(intent.id);
    });
  });
});
