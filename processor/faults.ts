/**
 * Injected faults, per instance and in memory (the only state not in PostgreSQL). Tests add them
 * over HTTP (see fault-routes.ts); each applies to one future execution of its operation, in the
 * order added. A replay of a stored answer is not an execution and consumes nothing.
 */
export const OPERATIONS = [
  'create_intent',
  'confirm_intent',
  'retrieve_intent',
  'cancel_intent',
  'list_intents',
  'create_refund',
  'retrieve_refund',
  'list_refunds',
  'retrieve_event',
  'list_events',
  'authenticate_intent',
  'settle_intent',
  'settle_refund',
] as const;
export type Operation = (typeof OPERATIONS)[number];

/**
 * - `drop_after`: do the work, commit it with the key's answer, then reset the connection unanswered.
 * - `error_after`: do the work and commit it, but answer (and store) a 500 instead.
 * - `error_before`: do nothing; answer (and store) a 500.
 * - `latency`: wait `latencyMs` before doing the work, which is still done.
 */
export const FAULT_KINDS = ['drop_after', 'error_after', 'error_before', 'latency'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Fault {
  readonly operation: Operation;
  readonly fault: FaultKind;
  readonly latencyMs: number;
}

export class FaultInjector {
  private pending: Fault[] = [];

  add(fault: Fault, times: number): void {
    for (let count = 0; count < times; count++) this.pending.push(fault);
  }

  /** The next fault for this execution of `operation`, removed from the queue. */
  take(operation: Operation): Fault | undefined {
    const index = this.pending.findIndex((fault) => fault.operation === operation);
    return index < 0 ? undefined : this.pending.splice(index, 1)[0];
  }

  list(): readonly Fault[] {
    return [...this.pending];
  }

  clear(): void {
    this.pending = [];
  }
}
