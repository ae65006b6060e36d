import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Complete, Delivery, FeedEvent, HistoryRecord, Invoke, Lost, Pago, ProcessorIntent, ProcessorRefund, Reembolso, Setup } from './history.js';

/**
 * The soak's checker: reads a history (`history.ts`) and nothing else, and says which invariants it
 * breaks. Pure: the same history always gives the same verdict, so a failing run is reproduced by
 * its file alone.
 */

export const INVARIANTS = [
  'charged-once', // an order charged at most once at the processor
  'approved-iff-charged', // APROBADO ↔ the payment's intent has a charge
  'replay-identical', // every final answer of a key is its first one, byte for byte
  'answer-matches-processor', // a 201/402 the processor's final state does not contradict
  'nothing-pending', // nothing PENDIENTE after the quiet period; nothing waiting that the processor decided
  'refunds-balance', // refunds ≤ the payment, and equal to the processor's
  'event-per-settlement', // every settled payment/refund has its event, once
  'delivery-consistent', // every event delivered, under its own id, with a valid signature
  'feed-no-duplicates', // no event twice in the feed
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  readonly invariant: Invariant;
  readonly message: string;
  /** The Idempotency-Keys whose operations the report prints. */
  readonly keys: readonly string[];
}

export interface Verdict {
  /** How many things each invariant looked at. */
  readonly checked: Record<Invariant, number>;
  readonly violations: readonly Violation[];
  readonly operations: number;
  readonly answersByStatus: Record<string, number>;
  readonly faultsByKind: Record<string, number>;
}

interface Answered {
  readonly invoke: Invoke;
  readonly complete: Complete;
}

// The answers a key keeps: a replay must repeat them exactly.
const FINAL_STATUSES = new Set([201, 202, 402]);
const SETTLED_EVENT: Record<string, string> = { APROBADO: 'aprobado', RECHAZADO: 'rechazado', FALLIDO: 'fallido' };
// Types that one resource may legitimately have twice (a FALLIDO payment retried may fail again).
const REPEATABLE_TYPES = new Set(['pago.fallido', 'pago.requiere_autenticacion']);

export function checkHistory(history: readonly HistoryRecord[]): Verdict {
  const state = new HistoryState(history);
  const checked = Object.fromEntries(INVARIANTS.map((name) => [name, 0])) as Record<Invariant, number>;
  const violations: Violation[] = [];
  const report = (invariant: Invariant, message: string, keys: readonly string[] = []): void => void violations.push({ invariant, message, keys });
  const count = (invariant: Invariant): void => void (checked[invariant] += 1);
  checkCharges(state, count, report);
  checkReplays(state, count, report);
  checkAnswers(state, count, report);
  checkPending(state, count, report);
  checkRefunds(state, count, report);
  checkEvents(state, count, report);
  checkDeliveries(state, count, report);
  return { checked, violations, operations: state.invokes.size, answersByStatus: state.answersByStatus(), faultsByKind: state.faultsByKind() };
}

type Count = (invariant: Invariant) => void;
type Report = (invariant: Invariant, message: string, keys?: readonly string[]) => void;

/** The history indexed for the checks. */
class HistoryState {
  readonly invokes = new Map<number, Invoke>();
  readonly completes = new Map<number, Complete>();
  readonly lost = new Map<number, Lost>();
  readonly pagos = new Map<string, Pago>();
  readonly reembolsos: Reembolso[] = [];
  readonly intents: ProcessorIntent[] = [];
  readonly refunds: ProcessorRefund[] = [];
  readonly feed: FeedEvent[] = [];
  readonly deliveries: Delivery[] = [];
  readonly faults: string[] = [];
  setup: Setup | undefined;

  constructor(history: readonly HistoryRecord[]) {
    for (const record of history) this.add(record);
  }

  private add(record: HistoryRecord): void {
    switch (record.t) {
      case 'invoke': return void this.invokes.set(record.op, record);
      case 'complete': return void this.completes.set(record.op, record);
      case 'lost': return void this.lost.set(record.op, record);
      case 'fault': return void this.faults.push(record.kind);
      case 'setup': return void (this.setup = record);
      case 'intent': return void this.intents.push(record);
      case 'processor-refund': return void this.refunds.push(record);
      case 'pago': return void this.pagos.set(record.id, record);
      case 'reembolso': return void this.reembolsos.push(record);
      case 'evento': return void this.feed.push(record);
      case 'delivery': return void this.deliveries.push(record);
      default: {
        const unknown: never = record;
        throw new Error(`unknown history record ${JSON.stringify(unknown)}`);
      }
    }
  }

  /** Every answered operation, in the order the answers arrived. */
  answered(): Answered[] {
    return [...this.completes.values()]
      .sort((a, b) => a.at - b.at || a.op - b.op)
      .flatMap((complete) => {
        const invoke = this.invokes.get(complete.op);
        return invoke ? [{ invoke, complete }] : [];
      });
  }

  chargedIntentsOf(pagoId: string): ProcessorIntent[] {
    return this.intents.filter((intent) => intent.pagoId === pagoId && intent.charged);
  }

  answersByStatus(): Record<string, number> {
    const counts: Record<string, number> = { lost: this.lost.size };
    for (const { status } of this.completes.values()) counts[status] = (counts[status] ?? 0) + 1;
    return counts;
  }

  faultsByKind(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const kind of this.faults) counts[kind] = (counts[kind] ?? 0) + 1;
    return counts;
  }
}

function checkCharges(state: HistoryState, count: Count, report: Report): void {
  const chargedByOrder = new Map<string, string[]>();
  for (const intent of state.intents.filter((each) => each.charged)) {
    count('approved-iff-charged');
    const pago = intent.pagoId === null ? undefined : state.pagos.get(intent.pagoId);
    if (!pago) report('approved-iff-charged', `intent ${intent.id} is charged but belongs to no payment the service lists (pago ${intent.pagoId})`);
    else if (pago.estado !== 'APROBADO') report('approved-iff-charged', `intent ${intent.id} is charged but pago ${pago.id} is ${pago.estado}`, keysOfPago(state, pago.id));
    const order = pago?.numeroOrden ?? `pago ${intent.pagoId}`;
    chargedByOrder.set(order, [...(chargedByOrder.get(order) ?? []), intent.id]);
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

function checkReplays(state: HistoryState, count: Count, report: Report): void {
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

function checkAnswers(state: HistoryState, count: Count, report: Report): void {
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
      const refund = state.refunds.find((each) => each.reembolsoId === id);
      if (refund?.status !== 'succeeded') report('answer-matches-processor', `op ${complete.op} answered 201 for reembolso ${id}; the processor's refund is ${refund ? refund.status : 'missing'}`, [invoke.key]);
    }
  }
}

function checkPending(state: HistoryState, count: Count, report: Report): void {
  for (const pago of state.pagos.values()) {
    count('nothing-pending');
    if (pago.estado === 'PENDIENTE') report('nothing-pending', `pago ${pago.id} is still PENDIENTE after the quiet period`, keysOfPago(state, pago.id));
    if (pago.estado !== 'REQUIERE_AUTENTICACION') continue;
    const decided = state.intents.filter((intent) => intent.pagoId === pago.id && intent.status !== 'requires_action' && intent.status !== 'canceled');
    if (decided.length > 0 && state.intents.every((intent) => intent.pagoId !== pago.id || intent.status !== 'requires_action')) {
      report('nothing-pending', `pago ${pago.id} still waits for authentication, but the processor decided its intent (${decided.map((intent) => `${intent.id} ${intent.status}`).join(', ')})`, keysOfPago(state, pago.id));
    }
  }
  for (const reembolso of state.reembolsos) {
    count('nothing-pending');
    if (reembolso.estado === 'PENDIENTE') report('nothing-pending', `reembolso ${reembolso.id} is still PENDIENTE after the quiet period`, keysOfReembolso(state, reembolso.id));
  }
}

function checkRefunds(state: HistoryState, count: Count, report: Report): void {
  for (const pago of state.pagos.values()) {
    const ours = state.reembolsos.filter((reembolso) => reembolso.pagoId === pago.id);
    if (ours.length === 0 && pago.montoReembolsado === 0) continue;
    count('refunds-balance');
    const approved = ours.filter((reembolso) => reembolso.estado === 'APROBADO').reduce((sum, reembolso) => sum + reembolso.monto, 0);
    const atProcessor = state.chargedIntentsOf(pago.id).reduce((sum, intent) => sum + intent.amountRefunded, 0);
    const keys = [...keysOfPago(state, pago.id), ...ours.flatMap((reembolso) => keysOfReembolso(state, reembolso.id))];
    if (approved > pago.monto) report('refunds-balance', `pago ${pago.id}: ${approved} refunded of ${pago.monto}`, keys);
    if (approved !== pago.montoReembolsado) report('refunds-balance', `pago ${pago.id}: montoReembolsado ${pago.montoReembolsado}, its APROBADO refunds sum ${approved}`, keys);
    if (approved !== atProcessor) report('refunds-balance', `pago ${pago.id}: the service refunded ${approved}, the processor ${atProcessor}`, keys);
  }
  for (const reembolso of state.reembolsos) {
    if (reembolso.estado !== 'FALLIDO') continue;
    count('refunds-balance');
    const made = state.refunds.filter((refund) => refund.reembolsoId === reembolso.id && (refund.status === 'succeeded' || refund.status === 'pending'));
    if (made.length > 0) report('refunds-balance', `reembolso ${reembolso.id} is FALLIDO but the processor refunded it (${made.map((refund) => refund.id).join(', ')})`, keysOfReembolso(state, reembolso.id));
  }
}

function checkEvents(state: HistoryState, count: Count, report: Report): void {
  const seen = new Set<string>();
  const idsByResource = new Map<string, string[]>();
  for (const event of state.feed) {
    count('feed-no-duplicates');
    if (seen.has(event.id)) report('feed-no-duplicates', `event ${event.id} (${event.type} of ${event.dataId}) is in the feed twice`);
    seen.add(event.id);
    const resource = `${event.type} ${event.dataId}`;
    idsByResource.set(resource, [...new Set([...(idsByResource.get(resource) ?? []), event.id])]);
  }
  const settled = [
    ...[...state.pagos.values()].map((pago) => ({ type: `pago.${SETTLED_EVENT[pago.estado]}`, id: pago.id, estado: pago.estado })),
    ...state.reembolsos.map((reembolso) => ({ type: `reembolso.${SETTLED_EVENT[reembolso.estado]}`, id: reembolso.id, estado: reembolso.estado })),
  ].filter((each) => !each.type.endsWith('undefined'));
  for (const { type, id, estado } of settled) {
    count('event-per-settlement');
    const ids = idsByResource.get(`${type} ${id}`) ?? [];
    if (ids.length === 0) report('event-per-settlement', `${id} is ${estado} but the feed has no ${type} for it`);
  }
  for (const [resource, ids] of idsByResource) {
    if (ids.length > 1 && !REPEATABLE_TYPES.has(resource.split(' ')[0]!)) report('event-per-settlement', `${resource} has ${ids.length} events: ${ids.join(', ')}`);
  }
}

function checkDeliveries(state: HistoryState, count: Count, report: Report): void {
  const secret = state.setup?.webhookSecret;
  const feedIds = new Set(state.feed.map((event) => event.id));
  const acknowledged = new Set<string>();
  const bodyOf = new Map<string, string>();
  for (const delivery of state.deliveries) {
    count('delivery-consistent');
    const bodyId = parse(delivery.body)?.id;
    if (bodyId !== delivery.webhookId) report('delivery-consistent', `delivery under webhook-id ${delivery.webhookId} carries event ${String(bodyId)}`);
    if (!feedIds.has(delivery.webhookId)) report('delivery-consistent', `webhook-id ${delivery.webhookId} is not an event of the feed`);
    if (secret === undefined || !validSignature(secret, delivery)) report('delivery-consistent', `delivery of ${delivery.webhookId} has a bad signature`);
    const earlier = bodyOf.get(delivery.webhookId);
    if (earlier !== undefined && earlier !== delivery.body) report('delivery-consistent', `event ${delivery.webhookId} was delivered with two different bodies`);
    bodyOf.set(delivery.webhookId, delivery.body);
    if (delivery.status >= 200 && delivery.status < 300) acknowledged.add(delivery.webhookId);
  }
  for (const event of state.feed) {
    count('delivery-consistent');
    if (!acknowledged.has(event.id)) report('delivery-consistent', `event ${event.id} (${event.type} of ${event.dataId}) was never delivered with a 2xx`);
  }
}

/** Standard Webhooks: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the secret's base64 part; the timestamp's age is not judged here. */
export function validSignature(secret: string, delivery: Pick<Delivery, 'webhookId' | 'timestamp' | 'body' | 'signature'>): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${delivery.webhookId}.${delivery.timestamp}.${delivery.body}`).digest();
  return delivery.signature.split(' ').some((part) => {
    const [version, value] = part.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function parse(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The keys whose answers named this payment (its creation, its refunds). */
function keysOfPago(state: HistoryState, pagoId: string): string[] {
  return keysWhere(state, (invoke, body) => body?.id === pagoId || (body?.pago as { id?: unknown } | undefined)?.id === pagoId || invoke.path.startsWith(`/pagos/${pagoId}/`));
}

function keysOfReembolso(state: HistoryState, reembolsoId: string): string[] {
  return keysWhere(state, (_invoke, body) => body?.id === reembolsoId);
}

function keysOfOrder(state: HistoryState, numeroOrden: string): string[] {
  return keysWhere(state, (invoke) => (invoke.body as { numeroOrden?: unknown } | undefined)?.numeroOrden === numeroOrden);
}

function keysWhere(state: HistoryState, matches: (invoke: Invoke, body: Record<string, unknown> | undefined) => boolean): string[] {
  const keys = new Set<string>();
  for (const invoke of state.invokes.values()) {
    if (invoke.key === undefined) continue;
    const complete = state.completes.get(invoke.op);
    if (matches(invoke, complete ? parse(complete.body) : undefined)) keys.add(invoke.key);
  }
  return [...keys];
}

/** Every record of the operations sent with these keys, in the order they happened: what a violation prints. */
export function operationsOf(history: readonly HistoryRecord[], keys: readonly string[]): HistoryRecord[] {
  const wanted = new Set(keys);
  const ops = new Set<number>();
  for (const record of history) if (record.t === 'invoke' && record.key !== undefined && wanted.has(record.key)) ops.add(record.op);
  return history.filter((record) => (record.t === 'invoke' || record.t === 'complete' || record.t === 'lost') && ops.has(record.op));
}
