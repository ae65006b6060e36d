import type { Complete } from './history.js';
import { type HistoryState, keysOfOrder, keysOfPago, keysOfReembolso, parse } from './history-state.js';
import type { Count, Report } from './checker.js';

// The answers a key keeps: a replay must repeat them exactly.
const FINAL_STATUSES = new Set([201, 202, 402]);

export function checkCharges(state: HistoryState, count: Count, report: Report): void {
  const chargedByOrder = new Map<string, string[]>();
  for (const intent of state.intents.filter((each) => each.charged)) {
    count('approved-iff-charged');
    const pago = intent.pagoId === null ? undefined : state.pagos.get(intent.pagoId);
    if (!pago) report('approved-iff-charged', `intent ${intent.id} is charged but belongs to no payment the service lists (pago ${intent.pagoId})`);
    else if (pago.estado !== 'APROBADO') report('approved-iff-charged', `intent ${intent.id} is charged but pago ${pago.id} is ${pago.estado}`, keysOfPago(state, pago.id));
    const order = pago?.numeroOrden ?? `pago ${intent.pagoId}`;
    const charged = chargedByOrder.get(order);
    if (charged) charged.push(intent.id);
    else chargedByOrder.set(order, [intent.id]);
  }
  for (const [order, intents] of chargedByOrder) {
    count('charged-once');
    if (intents.length > 1) report('charged-once', `order ${order} charged ${intents.length} times: ${intents.join(', ')}`, keysOfOrder(state, order));
  }
  for (const pago of state.pagos.values()) {
    if (pago.estado !== 'APROBADO') continue;
    count('approved-iff-charged');
    if (state.chargedIntentsOf(pago.id).length === 0) report('approved-iff-charged', `pago ${pago.id} is APROBADO but none of its intents is charged`, keysOfPago(state, pago.id));
  }
}

export function checkReplays(state: HistoryState, count: Count, report: Report): void {
  const firstByKey = new Map<string, Complete>();
  for (const { invoke, complete } of state.answered()) {
    if (invoke.key === undefined || !(FINAL_STATUSES.has(complete.status) || complete.replayed)) continue;
    count('replay-identical');
    const first = firstByKey.get(invoke.key);
    // The first answer seen may itself be a replay: the one before it was lost on the way.
    if (!first) {
      firstByKey.set(invoke.key, complete);
      continue;
    }
    if (first.status !== complete.status || first.body !== complete.body) {
      report('replay-identical', `key ${invoke.key}: op ${complete.op} answered ${complete.status} ${complete.body}, the key's first answer (op ${first.op}) was ${first.status} ${first.body}`, [invoke.key]);
    }
  }
}

export function checkAnswers(state: HistoryState, count: Count, report: Report): void {
  for (const { invoke, complete } of state.answered()) {
    if (invoke.method !== 'POST' || invoke.key === undefined) continue;
    const body = parse(complete.body);
    if (invoke.path === '/pagos' && complete.status === 201) {
      count('answer-matches-processor');
      const id = String(body?.id);
      if (state.chargedIntentsOf(id).length === 0) report('answer-matches-processor', `op ${complete.op} answered 201 for pago ${id}, which has no charged intent`, [invoke.key]);
    } else if (invoke.path === '/pagos' && complete.status === 402) {
      count('answer-matches-processor');
      const id = String((body?.pago as { id?: unknown } | undefined)?.id);
      if (state.chargedIntentsOf(id).length > 0) report('answer-matches-processor', `op ${complete.op} answered 402 for pago ${id}, whose intent is charged`, [invoke.key]);
    } else if (invoke.path.endsWith('/reembolsos') && complete.status === 201) {
      count('answer-matches-processor');
      const id = String(body?.id);
      const [refund] = state.processorRefundsOf(id);
      if (refund?.status !== 'succeeded') report('answer-matches-processor', `op ${complete.op} answered 201 for reembolso ${id}; the processor's refund is ${refund ? refund.status : 'missing'}`, [invoke.key]);
    }
  }
}

// A payment in one of these never leaves it (FALLIDO may: the same key retried can still succeed).
const SETTLED_FOR_GOOD = new Set(['APROBADO', 'RECHAZADO']);

/** `GET /pagos/{id}` of a payment the service has answered: it exists, and once settled it stays so. */
export function checkReads(state: HistoryState, count: Count, report: Report): void {
  for (const { invoke, complete } of state.answered()) {
    const id = /^\/pagos\/([^/?]+)$/.exec(invoke.path)?.[1];
    if (invoke.method !== 'GET' || id === undefined) continue;
    count('reads-consistent');
    const final = state.pagos.get(id);
    if (complete.status === 404) report('reads-consistent', `op ${complete.op}: GET ${invoke.path} answered 404 for a payment the service had answered${final ? ` (it ends ${final.estado})` : ''}`, keysOfPago(state, id));
    if (complete.status !== 200) continue;
    const shown = parse(complete.body);
    if (!final) report('reads-consistent', `op ${complete.op}: GET ${invoke.path} showed a payment the service doesn't list at the end`);
    else if (SETTLED_FOR_GOOD.has(String(shown?.estado)) && (shown?.estado !== final.estado || shown?.monto !== final.monto)) {
      report('reads-consistent', `op ${complete.op}: GET ${invoke.path} showed ${String(shown?.estado)} ${String(shown?.monto)}, the payment ends ${final.estado} ${final.monto}`, keysOfPago(state, id));
    }
  }
}

export function checkPending(state: HistoryState, count: Count, report: Report): void {
  for (const pago of state.pagos.values()) {
    count('nothing-pending');
    if (pago.estado === 'PENDIENTE') report('nothing-pending', `pago ${pago.id} is still PENDIENTE after the quiet period`, keysOfPago(state, pago.id));
    if (pago.estado !== 'REQUIERE_AUTENTICACION') continue;
    const intents = state.intentsOf(pago.id);
    const decided = intents.filter((intent) => intent.status !== 'requires_action' && intent.status !== 'canceled');
    if (decided.length > 0 && intents.every((intent) => intent.status !== 'requires_action')) {
      report('nothing-pending', `pago ${pago.id} still waits for authentication, but the processor decided its intent (${decided.map((intent) => `${intent.id} ${intent.status}`).join(', ')})`, keysOfPago(state, pago.id));
    }
  }
  for (const reembolso of state.reembolsos) {
    count('nothing-pending');
    if (reembolso.estado === 'PENDIENTE') report('nothing-pending', `reembolso ${reembolso.id} is still PENDIENTE after the quiet period`, keysOfReembolso(state, reembolso.id));
  }
}

export function checkRefunds(state: HistoryState, count: Count, report: Report): void {
  for (const pago of state.pagos.values()) {
    const ours = state.reembolsosOf(pago.id);
    if (ours.length === 0 && pago.montoReembolsado === 0) continue;
    count('refunds-balance');
    const approved = ours.filter((reembolso) => reembolso.estado === 'APROBADO').reduce((sum, reembolso) => sum + reembolso.monto, 0);
    const atProcessor = state.chargedIntentsOf(pago.id).reduce((sum, intent) => sum + intent.amountRefunded, 0);
    // Only for a violation: finding the keys reads every operation.
    const keys = () => [...keysOfPago(state, pago.id), ...ours.flatMap((reembolso) => keysOfReembolso(state, reembolso.id))];
    if (approved > pago.monto) report('refunds-balance', `pago ${pago.id}: ${approved} refunded of ${pago.monto}`, keys());
    if (approved !== pago.montoReembolsado) report('refunds-balance', `pago ${pago.id}: montoReembolsado ${pago.montoReembolsado}, its APROBADO refunds sum ${approved}`, keys());
    if (approved !== atProcessor) report('refunds-balance', `pago ${pago.id}: the service refunded ${approved}, the processor ${atProcessor}`, keys());
  }
  for (const reembolso of state.reembolsos) {
    if (reembolso.estado !== 'FALLIDO') continue;
    count('refunds-balance');
    const made = state.processorRefundsOf(reembolso.id).filter((refund) => refund.status === 'succeeded' || refund.status === 'pending');
    if (made.length > 0) report('refunds-balance', `reembolso ${reembolso.id} is FALLIDO but the processor refunded it (${made.map((refund) => refund.id).join(', ')})`, keysOfReembolso(state, reembolso.id));
  }
}

