/**
 * Why a watch ended: its row's notification came, everybody must re-read (the listener came up or
 * went down), its time (or poll interval) passed, its client went away, or the process is shutting down.
 */
export type WakeReason = 'notified' | 'recheck' | 'elapsed' | 'aborted' | 'closing';

// While no notification can arrive, a waiter re-reads its row this often (with jitter, so that
// many waiters don't read in step): soon enough for a slow network, rare enough for the pool.
const POLL_MIN_MS = 100;
const POLL_JITTER_MS = 150;

type Wake = (reason: WakeReason) => void;

/** One waiter's interest in one id, taken before it reads the row so that no notification is missed. */
export class Watch {
  private readonly woken: Promise<WakeReason>;
  private wake!: Wake;

  constructor(
    private readonly unsubscribe: (wake: Wake) => void,
    private readonly pollMs: () => number | undefined,
  ) {
    this.woken = new Promise((resolve) => (this.wake = resolve));
  }

  /** Registered as the id's subscriber; resolves the wait, also one that has not started yet. */
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

/** How a wait ended: the last value read, and whether the waiter waited at all (the first read may end it). */
export interface WaitedRead<T> {
  readonly value: T;
  readonly waited: boolean;
}

/**
 * The requests of this process that wait for rows to change, by the id that the row's notification
 * names, at most `maxWaiters` at once. Told by a feature's channel subscription which ids were
 * notified and whether notifications flow; without them, waits are cut to a poll interval so that
 * waiters re-read. Holds no database connection. A feature extends it with its own ids and limits.
 */
export class NotificationWaiters {
  private readonly watches = new Map<string, Set<Wake>>();
  private waiting = 0;
  private listening = false;
  private closing = false;

  constructor(
    private readonly maxWaiters: number,
    private readonly counted: (waiting: number) => void = () => undefined,
  ) {}

  /** Takes a waiter's place; false when `maxWaiters` are already waiting or the process is shutting down. */
  enter(): boolean {
    if (this.closing || this.waiting >= this.maxWaiters) return false;
    this.counted(++this.waiting);
    return true;
  }

  leave(): void {
    this.counted(--this.waiting);
  }

  get isClosing(): boolean {
    return this.closing;
  }

  watchFor(id: string): Watch {
    const pollMs = (): number | undefined => (this.listening ? undefined : POLL_MIN_MS + Math.random() * POLL_JITTER_MS);
    const watch = new Watch((wake) => this.remove(id, wake), pollMs);
    if (this.closing) watch.subscriber('closing');
    else this.watches.set(id, (this.watches.get(id) ?? new Set()).add(watch.subscriber));
    return watch;
  }

  notified(id: string): void {
    this.wakeAll('notified', this.watches.get(id));
  }

  /**
   * Notifications start or stop flowing. Either way every waiter re-reads: a change that came while
   * nobody listened would otherwise be missed, and waits switch to polling or back.
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

  /**
   * Reads `id`'s row until `done`, the `deadline` (a `performance.now()` time), the client going away
   * or shutdown: watch, then `read` (which marks the row waited first, so that a change the read
   * misses is notified, and the watch is already there to receive it), then wait for a wake.
   * Aborted or closing, it answers the last read.
   */
  async readUntil<T>(id: string, read: () => Promise<T>, done: (value: T) => boolean, deadline: number, signal: AbortSignal): Promise<WaitedRead<T>> {
    for (let waited = false; ; waited = true) {
      const watching = this.watchFor(id);
      let value: T;
      try {
        value = await read();
      } catch (error) {
        watching.cancel();
        throw error;
      }
      const remainingMs = deadline - performance.now();
      if (done(value) || remainingMs <= 0 || signal.aborted || this.closing) {
        watching.cancel();
        return { value, waited };
      }
      const reason = await watching.wait(remainingMs, signal);
      if (reason === 'aborted' || reason === 'closing') return { value, waited: true };
    }
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
