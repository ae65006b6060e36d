import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import type { IdempotencyOptions } from './idempotency.options.js';

/**
 * Why a watch ended: its key settled, everybody must re-read (the listener came up or went down),
 * its time (or poll interval) passed, its client went away, or the process is shutting down.
 */
export type WakeReason = 'settled' | 'recheck' | 'elapsed' | 'aborted' | 'closing';

// While no notification can arrive, a waiter re-reads its key this often (with jitter, so that
// many waiters don't read in step): soon enough for a slow network, rare enough for the pool.
const POLL_MIN_MS = 100;
const POLL_JITTER_MS = 150;

type Wake = (reason: WakeReason) => void;

/** One waiter's interest in one key, taken before it reads the key so that no settlement is missed. */
export class KeyWatch {
  private readonly woken: Promise<WakeReason>;
  private wake!: Wake;

  constructor(
    private readonly unsubscribe: (wake: Wake) => void,
    private readonly pollMs: () => number | undefined,
  ) {
    this.woken = new Promise((resolve) => (this.wake = resolve));
  }

  /** Registered as the key's subscriber; resolves the wait, also one that has not started yet. */
  get subscriber(): Wake {
    return this.wake;
  }

  /** Resolves when woken, or after `ms` (at most one poll interval while notifications are down). */
  async wait(ms: number, signal: AbortSignal): Promise<WakeReason> {
    const poll = this.pollMs();
    const timer = setTimeout(() => this.wake('elapsed'), poll === undefined ? ms : Math.min(ms, poll));
    const abort = (): void => this.wake('aborted');
    signal.addEventListener('abort', abort, { once: true });
    if (signal.aborted) abort();
    try {
      return await this.woken;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      this.cancel();
    }
  }

  cancel(): void {
    this.unsubscribe(this.wake);
  }
}

/**
 * The duplicates of this process that wait for a key in flight to settle, by key. The listener
 * tells it which keys settled and whether notifications flow; without them, waits are cut to a
 * poll interval so that waiters re-read their key. Holds no database connection.
 */
@Injectable()
export class KeyWaiters implements OnModuleDestroy {
  private readonly watches = new Map<string, Set<Wake>>();
  private waiting = 0;
  private listening = false;
  private closing = false;

  constructor(
    private readonly events: IdempotencyEvents,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
  ) {}

  /** Takes a waiter's place; false when `maxWaiters` are already waiting or the process is shutting down. */
  enter(): boolean {
    if (this.closing || this.waiting >= this.options.waiting.maxWaiters) return false;
    this.events.waiters(++this.waiting);
    return true;
  }

  leave(): void {
    this.events.waiters(--this.waiting);
  }

  get isClosing(): boolean {
    return this.closing;
  }

  watch(scope: string, key: string): KeyWatch {
    const id = watchId(scope, key);
    const pollMs = (): number | undefined => (this.listening ? undefined : POLL_MIN_MS + Math.random() * POLL_JITTER_MS);
    const watch = new KeyWatch((wake) => this.remove(id, wake), pollMs);
    if (this.closing) watch.subscriber('closing');
    else this.watches.set(id, (this.watches.get(id) ?? new Set()).add(watch.subscriber));
    return watch;
  }

  keySettled(scope: string, key: string): void {
    this.wakeAll('settled', this.watches.get(watchId(scope, key)));
  }

  /**
   * Notifications start or stop flowing. Either way every waiter re-reads its key: one that
   * settled while nobody listened would otherwise be missed, and waits switch to polling or back.
   */
  setListening(listening: boolean): void {
    this.listening = listening;
    for (const wakes of [...this.watches.values()]) this.wakeAll('recheck', wakes);
  }

  /** Shutdown: every waiter answers now (Nest calls this before it closes the HTTP server). */
  onModuleDestroy(): void {
    this.closing = true;
    for (const wakes of [...this.watches.values()]) this.wakeAll('closing', wakes);
  }

  private wakeAll(reason: WakeReason, wakes: Set<Wake> | undefined): void {
    for (const wake of [...(wakes ?? [])]) wake(reason);
  }

  private remove(id: string, wake: Wake): void {
    const wakes = this.watches.get(id);
    if (!wakes?.delete(wake)) return;
    if (wakes.size === 0) this.watches.delete(id);
  }
}

// Unambiguous for any scope and key: the JSON array the trigger sends, as JavaScript writes it.
function watchId(scope: string, key: string): string {
  return JSON.stringify([scope, key]);
}
