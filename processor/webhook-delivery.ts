import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { type ClaimedEvent, claimNextEvent, recordDelivered, recordDropped, recordFailedAttempt, recordHeld } from './event-deliveries.js';
import type { WebhookFaultInjector } from './webhook-faults.js';
import { postEvent, type WebhookEndpoint } from './webhook-sender.js';

export interface WebhookDeliveryOptions {
  readonly pool: pg.Pool;
  /** This instance, as its leases name it (see instance-liveness.ts). */
  readonly instance: number;
  readonly faults: WebhookFaultInjector;
  /** First retry after this long, doubling up to `retryMaxMs`. */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly log: (line: string) => void;
}

// How often an idle instance looks for due events (written by any instance, or due for a retry).
const IDLE_POLL_MS = 250;

/**
 * The delivery loop: while an endpoint is set, claims the oldest due event, POSTs it and records the
 * outcome, one at a time; then waits a poll interval. Timers are unref'd: the loop never keeps a
 * process alive. All of its state is in PostgreSQL, so a restarted instance delivers what is pending.
 */
export class WebhookDelivery {
  private endpoint: WebhookEndpoint | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private busy = false;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly delayed = new Set<Promise<void>>();

  constructor(private readonly options: WebhookDeliveryOptions) {}

  /** Starts (or redirects) delivery; events written before it was set are delivered now. */
  setEndpoint(endpoint: WebhookEndpoint): void {
    this.endpoint = endpoint;
    if (!this.stopped && !this.busy) this.schedule(0);
  }

  /** Stops the loop, aborts the POSTs in flight (their events go to whoever claims them next) and waits for it. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
    await Promise.allSettled([...this.delayed]);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.runOnce(), ms);
    this.timer.unref();
  }

  private runOnce(): void {
    this.busy = true;
    this.running = this.deliverDue()
      .catch((error: Error) => this.report(error))
      .finally(() => {
        this.busy = false;
        if (!this.stopped) this.schedule(Math.min(IDLE_POLL_MS, this.options.retryBaseMs));
      });
  }

  private async deliverDue(): Promise<void> {
    const { pool, instance } = this.options;
    while (!this.stopped && this.endpoint) {
      const event = await claimNextEvent(pool, instance);
      if (!event) return;
      await this.deliver(event, this.endpoint);
    }
  }

  private async deliver(event: ClaimedEvent, endpoint: WebhookEndpoint): Promise<void> {
    const { pool, instance } = this.options;
    const fault = this.options.faults.take(event.type) ?? { fault: 'none' as const, delayMs: 0 };
    switch (fault.fault) {
      case 'drop':
        return recordDropped(pool, event, instance);
      case 'reorder':
        return recordHeld(pool, event, instance);
      case 'delay':
        return this.sendLater(event, endpoint, fault.delayMs);
      case 'duplicate':
        return this.send(event, endpoint, 2);
      case 'none':
        return this.send(event, endpoint, 1);
      default:
        return fault satisfies never;
    }
  }

  /** The first POST decides the outcome; further copies are the injected duplicates. */
  private async send(event: ClaimedEvent, endpoint: WebhookEndpoint, copies: number): Promise<void> {
    const { pool, instance, retryBaseMs, retryMaxMs } = this.options;
    const first = await postEvent(endpoint, event.body, this.abort.signal);
    for (let copy = 1; copy < copies; copy++) await postEvent(endpoint, event.body, this.abort.signal);
    if (first.ok) return recordDelivered(pool, event, instance, first.status!, copies);
    // Aborted by stop(): not the endpoint's failure; the lease ends with this instance.
    if (this.stopped) return;
    await recordFailedAttempt(pool, event, instance, { status: first.status, error: first.error, posts: copies }, { baseMs: retryBaseMs, maxMs: retryMaxMs });
  }

  /** Keeps the lease and sends after `delayMs`, while the loop goes on with later events. */
  private sendLater(event: ClaimedEvent, endpoint: WebhookEndpoint, delayMs: number): void {
    const later = sleep(delayMs, undefined, { signal: this.abort.signal, ref: false })
      .then(() => this.send(event, endpoint, 1))
      .catch((error: Error) => this.report(error))
      .finally(() => this.delayed.delete(later));
    this.delayed.add(later);
  }

  private report(error: Error): void {
    if (!this.stopped) this.options.log(`webhook delivery failed: ${error.message}`);
  }
}
