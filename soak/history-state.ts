import type { Complete, Delivery, FeedEvent, HistoryRecord, Invoke, Lost, Pago, ProcessorIntent, ProcessorRefund, Reembolso, Setup } from './history.js';

export interface Answered {
  readonly invoke: Invoke;
  readonly complete: Complete;
}

/** The history indexed for the checks. */
export class HistoryState {
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
    return this.intentsOf(pagoId).filter((intent) => intent.charged);
  }

  // Indexed once: an hour's history has a hundred thousand payments, and a scan per payment is quadratic.
  private intentsByPago: Map<string, ProcessorIntent[]> | undefined;
  private reembolsosByPago: Map<string, Reembolso[]> | undefined;
  private refundsByReembolso: Map<string, ProcessorRefund[]> | undefined;

  intentsOf(pagoId: string): ProcessorIntent[] {
    this.intentsByPago ??= groupBy(this.intents, (intent) => intent.pagoId);
    return this.intentsByPago.get(pagoId) ?? [];
  }

  reembolsosOf(pagoId: string): Reembolso[] {
    this.reembolsosByPago ??= groupBy(this.reembolsos, (reembolso) => reembolso.pagoId);
    return this.reembolsosByPago.get(pagoId) ?? [];
  }

  processorRefundsOf(reembolsoId: string): ProcessorRefund[] {
    this.refundsByReembolso ??= groupBy(this.refunds, (refund) => refund.reembolsoId);
    return this.refundsByReembolso.get(reembolsoId) ?? [];
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

export function parse(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The keys whose answers named this payment (its creation, its refunds). */
export function keysOfPago(state: HistoryState, pagoId: string): string[] {
  return keysWhere(state, (invoke, body) => body?.id === pagoId || (body?.pago as { id?: unknown } | undefined)?.id === pagoId || invoke.path.startsWith(`/pagos/${pagoId}/`));
}

export function keysOfReembolso(state: HistoryState, reembolsoId: string): string[] {
  return keysWhere(state, (_invoke, body) => body?.id === reembolsoId);
}

export function keysOfOrder(state: HistoryState, numeroOrden: string): string[] {
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

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string | null): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    if (key === null) continue;
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
