import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { checkHistory, INVARIANTS, type Invariant, operationsOf, validSignature } from '../../soak/checker.js';
import type { Delivery, HistoryRecord } from '../../soak/history.js';

/**
 * The soak's checker against hand-written histories: a clean one passes every invariant, and each
 * planted violation is caught by the invariant that names it (and by no other), so a green soak
 * means something.
 */

const MERCHANT = 'soak0';
const SECRET = `whsec_${Buffer.from('soak-checker-test-secret').toString('base64')}`;
const PAGO = '11111111-1111-4111-8111-111111111111';
const REEMBOLSO = '22222222-2222-4222-8222-222222222222';
const pagoBody = (estado = 'APROBADO', montoReembolsado = 0) => JSON.stringify({ id: PAGO, numeroOrden: 'ORD-1', monto: 1000, moneda: 'EUR', montoReembolsado, estado });
const reembolsoBody = JSON.stringify({ id: REEMBOLSO, pagoId: PAGO, monto: 300, moneda: 'EUR', estado: 'APROBADO' });

function signed(webhookId: string, type: string, dataId: string, status = 200): Delivery {
  const body = JSON.stringify({ id: webhookId, type, timestamp: '2026-12-04T17:02:11.120Z', data: { id: dataId } });
  const timestamp = '1796403731';
  const signature = `v1,${createHmac('sha256', Buffer.from(SECRET.slice(6), 'base64')).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`;
  return { t: 'delivery', merchant: MERCHANT, webhookId, timestamp, signature, body, status };
}

/** One order paid with a lost first answer and a replay, then refunded in part; everything settled and delivered. */
function cleanHistory(): HistoryRecord[] {
  return [
    { t: 'setup', seed: 1, clients: 1, durationMs: 1000, webhookSecrets: { [MERCHANT]: SECRET } },
    { t: 'invoke', op: 1, client: 0, at: 1, method: 'POST', path: '/pagos', key: 'k-pay', body: { numeroOrden: 'ORD-1', monto: 1000 } },
    { t: 'lost', op: 1, at: 2, reason: 'dropped after the answer' },
    { t: 'fault', at: 2, kind: 'drop-after-answer' },
    { t: 'invoke', op: 2, client: 0, at: 3, method: 'POST', path: '/pagos', key: 'k-pay', body: { numeroOrden: 'ORD-1', monto: 1000 } },
    { t: 'complete', op: 2, at: 4, status: 201, replayed: true, body: pagoBody() },
    { t: 'invoke', op: 3, client: 0, at: 5, method: 'POST', path: '/pagos', key: 'k-pay', body: { numeroOrden: 'ORD-1', monto: 1000 } },
    { t: 'complete', op: 3, at: 6, status: 201, replayed: true, body: pagoBody() },
    { t: 'invoke', op: 4, client: 0, at: 7, method: 'POST', path: `/pagos/${PAGO}/reembolsos`, key: 'k-ref', body: { monto: 300 } },
    { t: 'complete', op: 4, at: 8, status: 201, replayed: false, body: reembolsoBody },
    { t: 'invoke', op: 5, client: 0, at: 9, method: 'GET', path: `/pagos/${PAGO}` },
    { t: 'complete', op: 5, at: 10, status: 200, replayed: false, body: pagoBody('APROBADO', 300) },
    { t: 'intent', id: 'pi_1', pagoId: PAGO, amount: 1000, status: 'succeeded', charged: true, amountRefunded: 300 },
    { t: 'processor-refund', id: 're_1', paymentIntent: 'pi_1', reembolsoId: REEMBOLSO, amount: 300, status: 'succeeded' },
    { t: 'pago', id: PAGO, numeroOrden: 'ORD-1', monto: 1000, estado: 'APROBADO', montoReembolsado: 300 },
    { t: 'reembolso', id: REEMBOLSO, pagoId: PAGO, monto: 300, estado: 'APROBADO' },
    { t: 'evento', merchant: MERCHANT, id: 'evt_1', type: 'pago.aprobado', dataId: PAGO },
    { t: 'evento', merchant: MERCHANT, id: 'evt_2', type: 'reembolso.aprobado', dataId: REEMBOLSO },
    signed('evt_1', 'pago.aprobado', PAGO, 500),
    signed('evt_1', 'pago.aprobado', PAGO),
    signed('evt_2', 'reembolso.aprobado', REEMBOLSO),
  ];
}

function violated(history: HistoryRecord[]): Invariant[] {
  return [...new Set(checkHistory(history).violations.map((violation) => violation.invariant))];
}

const replace = (history: HistoryRecord[], match: (record: HistoryRecord) => boolean, by: HistoryRecord[]): HistoryRecord[] =>
  history.flatMap((record) => (match(record) ? by : [record]));

describe('checkHistory', () => {
  it('passes a clean history and counts what it checked, answers by status and faults by kind', () => {
    const verdict = checkHistory(cleanHistory());
    expect(verdict.violations).toEqual([]);
    for (const invariant of INVARIANTS) expect(verdict.checked[invariant]).toBeGreaterThan(0);
    expect(verdict.operations).toBe(5);
    expect(verdict.answersByStatus).toEqual({ lost: 1, 200: 1, 201: 3 });
    expect(verdict.faultsByKind).toEqual({ 'drop-after-answer': 1 });
  });

  const planted: Array<[string, Invariant, (history: HistoryRecord[]) => HistoryRecord[]]> = [
    ['an order charged twice (a second charged intent of the same payment)', 'charged-once', (h) => [...h, { t: 'intent', id: 'pi_2', pagoId: PAGO, amount: 1000, status: 'succeeded', charged: true, amountRefunded: 0 }]],
    ['an order charged twice through two payments', 'charged-once', (h) => [
      ...h,
      { t: 'pago', id: 'p-2', numeroOrden: 'ORD-1', monto: 1000, estado: 'APROBADO', montoReembolsado: 0 },
      { t: 'intent', id: 'pi_2', pagoId: 'p-2', amount: 1000, status: 'succeeded', charged: true, amountRefunded: 0 },
      { t: 'evento', merchant: MERCHANT, id: 'evt_9', type: 'pago.aprobado', dataId: 'p-2' },
      signed('evt_9', 'pago.aprobado', 'p-2'),
    ]],
    ['an APROBADO payment without a charge', 'approved-iff-charged', (h) => [...h, { t: 'pago', id: 'p-3', numeroOrden: 'ORD-3', monto: 500, estado: 'APROBADO', montoReembolsado: 0 }, { t: 'evento', merchant: MERCHANT, id: 'evt_9', type: 'pago.aprobado', dataId: 'p-3' }, signed('evt_9', 'pago.aprobado', 'p-3')]],
    ['a charge whose payment is FALLIDO', 'approved-iff-charged', (h) => [...h, { t: 'pago', id: 'p-3', numeroOrden: 'ORD-3', monto: 500, estado: 'FALLIDO', montoReembolsado: 0 }, { t: 'intent', id: 'pi_3', pagoId: 'p-3', amount: 500, status: 'succeeded', charged: true, amountRefunded: 0 }, { t: 'evento', merchant: MERCHANT, id: 'evt_9', type: 'pago.fallido', dataId: 'p-3' }, signed('evt_9', 'pago.fallido', 'p-3')]],
    ['a replay whose body differs from the first answer', 'replay-identical', (h) => h.map((r) => (r.t === 'complete' && r.op === 3 ? { ...r, body: pagoBody('APROBADO', 300) } : r))],
    ['a key answered 201 and then 402', 'replay-identical', (h) => h.map((r) => (r.t === 'complete' && r.op === 3 ? { ...r, status: 402 } : r))],
    ['a read showing a settled payment in another state than its final one', 'reads-consistent', (h) => h.map((r) => (r.t === 'complete' && r.op === 5 ? { ...r, body: pagoBody('RECHAZADO') } : r))],
    ['a read of an answered payment that says 404', 'reads-consistent', (h) => h.map((r) => (r.t === 'complete' && r.op === 5 ? { ...r, status: 404, body: '{"status":404}' } : r))],
    ['a 402 for a payment the processor charged', 'answer-matches-processor', (h) => [
      ...h,
      { t: 'invoke', op: 9, client: 0, at: 9, method: 'POST', path: '/pagos', key: 'k-402', body: { numeroOrden: 'ORD-1' } },
      { t: 'complete', op: 9, at: 10, status: 402, replayed: false, body: JSON.stringify({ type: 'https://pagos.dev/problems/pago-rechazado', pago: { id: PAGO } }) },
    ]],
    ['a 201 refund the processor never made', 'answer-matches-processor', (h) => h.map((r) => (r.t === 'processor-refund' ? { ...r, status: 'failed' } : r)).map((r) => (r.t === 'intent' ? { ...r, amountRefunded: 300 } : r))],
    ['a payment still PENDIENTE', 'nothing-pending', (h) => [...h, { t: 'pago', id: 'p-4', numeroOrden: 'ORD-4', monto: 500, estado: 'PENDIENTE', montoReembolsado: 0 }]],
    ['a payment waiting for authentication that the processor declined', 'nothing-pending', (h) => [...h, { t: 'pago', id: 'p-4', numeroOrden: 'ORD-4', monto: 500, estado: 'REQUIERE_AUTENTICACION', montoReembolsado: 0 }, { t: 'intent', id: 'pi_4', pagoId: 'p-4', amount: 500, status: 'requires_payment_method', charged: false, amountRefunded: 0 }]],
    ['refunds summing over the payment', 'refunds-balance', (h) => [...h, { t: 'reembolso', id: 'r-2', pagoId: PAGO, monto: 800, estado: 'APROBADO' }, { t: 'evento', merchant: MERCHANT, id: 'evt_9', type: 'reembolso.aprobado', dataId: 'r-2' }, signed('evt_9', 'reembolso.aprobado', 'r-2')]],
    ["refunds differing from the processor's", 'refunds-balance', (h) => h.map((r) => (r.t === 'intent' ? { ...r, amountRefunded: 600 } : r))],
    ['a FALLIDO refund the processor made', 'refunds-balance', (h) => [...h, { t: 'reembolso', id: 'r-2', pagoId: PAGO, monto: 100, estado: 'FALLIDO' }, { t: 'processor-refund', id: 're_2', paymentIntent: 'pi_1', reembolsoId: 'r-2', amount: 100, status: 'succeeded' }, { t: 'evento', merchant: MERCHANT, id: 'evt_9', type: 'reembolso.fallido', dataId: 'r-2' }, signed('evt_9', 'reembolso.fallido', 'r-2')]],
    ['a settled payment without its event', 'event-per-settlement', (h) => h.filter((r) => !((r.t === 'evento' || r.t === 'delivery') && (r.t === 'evento' ? r.id : r.webhookId) === 'evt_1'))],
    ['one settlement with two events', 'event-per-settlement', (h) => [...h, { t: 'evento', merchant: MERCHANT, id: 'evt_9', type: 'pago.aprobado', dataId: PAGO }, signed('evt_9', 'pago.aprobado', PAGO)]],
    ['an event never delivered with a 2xx', 'delivery-consistent', (h) => h.filter((r) => !(r.t === 'delivery' && r.webhookId === 'evt_2'))],
    ['an event delivered under another webhook id', 'delivery-consistent', (h) => [...h, { ...signed('evt_1', 'pago.aprobado', PAGO), webhookId: 'evt_other' }]],
    ['an event delivered to the endpoint of another merchant', 'delivery-consistent', (h) => [...h, { ...signed('evt_1', 'pago.aprobado', PAGO), merchant: 'soak1' }]],
    ['a delivery with a bad signature', 'delivery-consistent', (h) => replace(h, (r) => r.t === 'delivery' && r.webhookId === 'evt_2', [{ ...signed('evt_2', 'reembolso.aprobado', REEMBOLSO), signature: 'v1,AAAA' }])],
    ['an event in the feed twice', 'feed-no-duplicates', (h) => [...h, { t: 'evento', merchant: MERCHANT, id: 'evt_2', type: 'reembolso.aprobado', dataId: REEMBOLSO }]],
  ];

  it.each(planted)('catches %s', (_name, invariant, plant) => {
    expect(violated(plant(cleanHistory()))).toEqual([invariant]);
  });

  it('prints the operations of the keys a violation names', () => {
    const history = cleanHistory();
    expect(operationsOf(history, ['k-pay']).map((record) => `${record.t} ${'op' in record ? record.op : ''}`)).toEqual(['invoke 1', 'lost 1', 'invoke 2', 'complete 2', 'invoke 3', 'complete 3']);
  });
});

describe('validSignature', () => {
  it('accepts the Standard Webhooks signature and refuses any other', () => {
    const delivery = signed('evt_1', 'pago.aprobado', PAGO);
    expect(validSignature(SECRET, delivery)).toBe(true);
    expect(validSignature(SECRET, { ...delivery, body: `${delivery.body} ` })).toBe(false);
    expect(validSignature(`whsec_${Buffer.from('another').toString('base64')}`, delivery)).toBe(false);
  });
});
