import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import type Stripe from 'stripe';
import { type LocalProcessor, startLocalProcessor } from '../../processor/local-processor.js';
import {
  addFault,
  countCharges,
  type ProcessorProcess,
  refundedOf,
  rejectionOf,
  runProcessorToExit,
  startProcessorProcess,
  stripeAt,
  waitUntil,
} from '../support/local-processor.js';
import { connect, createTestDatabase } from '../support/test-database.js';

type Settled<T> = { ok: true; value: T } | { ok: false; error: Stripe.errors.StripeError };

async function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: Stripe.errors.StripeError) => ({ ok: false as const, error }),
  );
}

/**
 * Two processor instances on one database behave as one processor: one in this process, one the
 * built standalone process (`dist/processor/main.js`). Both take 100 ms per money-moving call, so
 * racing requests overlap.
 */
describe('local processor: two instances on one database', () => {
  let databaseUrl: string;
  let inProcess: LocalProcessor;
  let standalone: ProcessorProcess;
  let clients: [Stripe, Stripe];
  let db: pg.Client;
  const logged: string[] = [];

  beforeAll(async () => {
    databaseUrl = await createTestDatabase('local_processor_instances');
    // Both bootstrap the schema at once on an empty database.
    [inProcess, standalone] = await Promise.all([
      startLocalProcessor({ databaseUrl, latencyMs: 100, log: (line) => logged.push(line) }),
      startProcessorProcess(databaseUrl, { GATEWAY_LATENCY_MS: '100', PROCESSOR_FAULTS: 'true' }),
    ]);
    clients = [stripeAt(inProcess.url), stripeAt(standalone.url)];
    db = await connect(databaseUrl);
  });

  afterAll(async () => {
    await db?.end();
    await inProcess?.close();
    await standalone?.stop();
    expect(logged).toEqual([]);
  });

  const paidIntent = async (amount: number) =>
    clients[0].paymentIntents.create({ amount, currency: 'eur', allowed_payment_method_types: ['card'], payment_method: 'pm_card_visa', confirm: true });

  it('the standalone process prints exactly one ready line on stdout', () => {
    expect(standalone.stdout()).toBe(`local processor listening on ${standalone.url}\n`);
    expect(standalone.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('20 concurrent confirmations of one intent under 20 keys, split across both: exactly one charge', async () => {
    const intent = await clients[0].paymentIntents.create({ amount: 4_200, currency: 'eur' });
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        settle(clients[index % 2]!.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: randomUUID() })),
      ),
    );
    const succeeded = attempts.filter((attempt) => attempt.ok);
    const refused = attempts.flatMap((attempt) => (attempt.ok ? [] : [attempt.error]));
    expect(succeeded).toHaveLength(1);
    expect(refused.map((error) => [error.statusCode, error.code])).toEqual(Array(19).fill([400, 'payment_intent_unexpected_state']));
    expect(await countCharges(db, intent.id)).toBe(1);
  });

  it('10 concurrent refunds racing for the rest of a charge, split across both: never more than the charge', async () => {
    const intent = await paidIntent(1_000);
    const attempts = await Promise.all(
      Array.from({ length: 10 }, (_, index) => settle(clients[index % 2]!.refunds.create({ payment_intent: intent.id, amount: 150 }, { idempotencyKey: randomUUID() }))),
    );
    expect(attempts.filter((attempt) => attempt.ok)).toHaveLength(6);
    for (const attempt of attempts) if (!attempt.ok) expect(attempt.error).toMatchObject({ statusCode: 400, param: 'amount' });
    expect(await refundedOf(db, intent.id)).toEqual({ refunds: 6, refundedSum: 900, amountRefunded: 900 });

    const rest = await Promise.all(Array.from({ length: 10 }, (_, index) => settle(clients[index % 2]!.refunds.create({ payment_intent: intent.id }))));
    expect(rest.filter((attempt) => attempt.ok).map((attempt) => (attempt.ok ? attempt.value.amount : 0))).toEqual([100]);
    for (const attempt of rest) if (!attempt.ok) expect(attempt.error).toMatchObject({ statusCode: 400, code: 'charge_already_refunded' });
    expect(await refundedOf(db, intent.id)).toEqual({ refunds: 7, refundedSum: 1_000, amountRefunded: 1_000 });
  });

  it('one key sent to both instances at once executes once: the other answer is a 409 or a replay', async () => {
    for (let round = 0; round < 8; round++) {
      const intent = await clients[0].paymentIntents.create({ amount: 700, currency: 'eur' });
      const key = randomUUID();
      const [first, second] = await Promise.all(clients.map((client) => settle(client.paymentIntents.confirm(intent.id, { payment_method: 'pm_card_visa' }, { idempotencyKey: key }))));
      const executed = [first!, second!].filter((attempt) => attempt.ok && attempt.value.lastResponse.headers['idempotent-replayed'] === undefined);
      expect(executed).toHaveLength(1);
      for (const attempt of [first!, second!]) {
        if (attempt.ok) expect(attempt.value.status).toBe('succeeded');
        else expect(attempt.error).toMatchObject({ statusCode: 409, code: 'idempotency_key_in_use' });
      }
      expect(await countCharges(db, intent.id)).toBe(1);
    }
  });

  it('a claim stale past 60 s is taken over by the other instance; the stalled one cannot complete it (fenced)', async () => {
    const intent = await paidIntent(1_000);
    const key = randomUUID();
    await addFault(standalone.url, { operation: 'create_refund', fault: 'latency', latencyMs: 1_500 });
    const stalled = settle(clients[1].refunds.create({ payment_intent: intent.id, amount: 100 }, { idempotencyKey: key }));
    await waitUntil(async () => (await db.query("SELECT 1 FROM procesador_local.idempotency_keys WHERE key = $1 AND status = 'in_flight'", [key])).rowCount === 1);
    // As if the standalone instance had stalled for a minute (never sleep out a timeout).
    await db.query("UPDATE procesador_local.idempotency_keys SET locked_at = locked_at - interval '61 seconds' WHERE key = $1", [key]);

    const takenOver = await clients[0].refunds.create({ payment_intent: intent.id, amount: 100 }, { idempotencyKey: key });
    expect(takenOver.amount).toBe(100);
    const late = await stalled;
    expect(late.ok).toBe(false);
    expect(late.ok || late.error).toMatchObject({ statusCode: 409, code: 'idempotency_key_in_use' });
    expect(await refundedOf(db, intent.id)).toEqual({ refunds: 1, refundedSum: 100, amountRefunded: 100 });
    const replayed = await clients[1].refunds.create({ payment_intent: intent.id, amount: 100 }, { idempotencyKey: key });
    expect(replayed.id).toBe(takenOver.id);
  });

  it('state outlives the process: after SIGTERM (exit 0) a new process serves the same intents', async () => {
    const intent = await paidIntent(250);
    expect(await standalone.stop('SIGTERM')).toBe(0);
    standalone = await startProcessorProcess(databaseUrl);
    const seen = await stripeAt(standalone.url).paymentIntents.retrieve(intent.id);
    expect(seen).toMatchObject({ status: 'succeeded', latest_charge: intent.latest_charge });
  });

  it('the standalone process refuses to start without DATABASE_URL or with a bad port, in one line, exit 1', async () => {
    const noDatabase = await runProcessorToExit({});
    expect(noDatabase).toMatchObject({ code: 1, stdout: '' });
    expect(noDatabase.stderr.trim().split('\n')).toEqual([expect.stringContaining('DATABASE_URL is required')]);
    const badPort = await runProcessorToExit({ DATABASE_URL: databaseUrl, PROCESSOR_PORT: 'eighty' });
    expect(badPort).toMatchObject({ code: 1, stdout: '' });
    expect(badPort.stderr).toContain("PROCESSOR_PORT must be an integer from 0 to 65535, got 'eighty'");
  });
});
