import { Injectable } from '@nestjs/common';
import type { Transaction } from '../database/query-rows.js';
import type { ProcessorEvent } from '../gateway/processor-events.js';

/** What an event changes, prepared outside the transaction (processor calls included), written inside it. */
export interface PreparedChange {
  /** Conditional writes only, on the transaction that also records the event as applied; returns what it did, for the log. */
  apply(db: Transaction): Promise<string>;
}

/**
 * One feature's share of the processor's events (payments take `payment_intent.*`, refunds
 * `refund.*`). `prepare` finds the feature's row the event is about — undefined when there is none:
 * the event is not ours — and asks the processor what is true now; it may throw the gateway's
 * `GatewayIndeterminateError`, and the processor then redelivers the event later.
 */
export interface ProcessorEventHandler {
  readonly types: readonly string[];
  prepare(event: ProcessorEvent): Promise<PreparedChange | undefined>;
}

/** The handlers features register at start-up (as refunds register with the reconciler): this module knows no feature. */
@Injectable()
export class ProcessorEventHandlers {
  private readonly byType = new Map<string, ProcessorEventHandler>();

  register(handler: ProcessorEventHandler): void {
    for (const type of handler.types) {
      if (this.byType.has(type)) throw new Error(`two handlers for processor events of type ${type}`);
      this.byType.set(type, handler);
    }
  }

  handlerOf(type: string): ProcessorEventHandler | undefined {
    return this.byType.get(type);
  }
}
