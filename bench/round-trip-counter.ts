import pg from 'pg';

let roundTrips = 0;

interface ClientQueues {
  readonly _activeQuery?: unknown;
  readonly _queryQueue?: readonly unknown[];
  readonly _sentQueryQueue?: readonly unknown[];
}

/**
 * Counts round trips to PostgreSQL made by this process, by wrapping node-postgres before the pool
 * opens its first connection. A statement sent on a connection with nothing in flight waits for
 * its own answer: one round trip. A statement sent while earlier ones on that connection are still
 * unanswered (pipeline mode, e.g. BEGIN with a transaction's first statement) shares their round trip.
 * Reads node-postgres' queues (8.23), which have no public accessor.
 */
export function countRoundTrips(): () => number {
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const queues = this as unknown as ClientQueues;
    const busy = Boolean(queues._activeQuery) || (queues._queryQueue?.length ?? 0) > 0 || (queues._sentQueryQueue?.length ?? 0) > 0;
    if (!busy) roundTrips++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return () => roundTrips;
}
