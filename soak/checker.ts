import { checkDeliveries, checkEvents } from './event-checks.js';
import type { HistoryRecord } from './history.js';
import { HistoryState } from './history-state.js';
import { checkAnswers, checkCharges, checkPending, checkReads, checkRefunds, checkReplays } from './money-checks.js';

export { validSignature } from './event-checks.js';
export { operationsOf } from './history-state.js';

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
  'reads-consistent', // a payment read by id exists, and a settled state it shows is its final one
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

export function checkHistory(history: readonly HistoryRecord[]): Verdict {
  const state = new HistoryState(history);
  const checked = Object.fromEntries(INVARIANTS.map((name) => [name, 0])) as Record<Invariant, number>;
  const violations: Violation[] = [];
  const report = (invariant: Invariant, message: string, keys: readonly string[] = []): void => void violations.push({ invariant, message, keys });
  const count = (invariant: Invariant): void => void (checked[invariant] += 1);
  checkCharges(state, count, report);
  checkReplays(state, count, report);
  checkAnswers(state, count, report);
  checkReads(state, count, report);
  checkPending(state, count, report);
  checkRefunds(state, count, report);
  checkEvents(state, count, report);
  checkDeliveries(state, count, report);
  return { checked, violations, operations: state.invokes.size, answersByStatus: state.answersByStatus(), faultsByKind: state.faultsByKind() };
}

export type Count = (invariant: Invariant) => void;
export type Report = (invariant: Invariant, message: string, keys?: readonly string[]) => void;
