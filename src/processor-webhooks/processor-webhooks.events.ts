import { Injectable } from '@nestjs/common';

/**
 * What became of one delivery of a processor event:
 * - applied: recorded, and its change (if it still changed anything) written with it;
 * - duplicate: applied before; nothing changed;
 * - ignored: a type no feature takes, or about nothing of ours; acknowledged, not recorded;
 * - rejected: bad signature, stale timestamp or not an event (400);
 * - postponed: the processor could not be asked; nothing applied (503), the processor redelivers.
 */
export const PROCESSOR_EVENT_OUTCOMES = ['applied', 'duplicate', 'ignored', 'rejected', 'postponed'] as const;
export type ProcessorEventOutcome = (typeof PROCESSOR_EVENT_OUTCOMES)[number];

/** Where the webhook intake reports, so that metrics count it without this module knowing them. */
@Injectable()
export class ProcessorWebhooksEvents {
  private readonly listeners: Array<(outcome: ProcessorEventOutcome) => void> = [];

  onReceived(listener: (outcome: ProcessorEventOutcome) => void): void {
    this.listeners.push(listener);
  }

  received(outcome: ProcessorEventOutcome): void {
    for (const listener of this.listeners) listener(outcome);
  }
}
