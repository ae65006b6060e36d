import pg from 'pg';

let roundTrips = 0;

// Pools that work beside the requests, not for them: the job queue's polling, the outbox relay's
// batches, the LISTEN connection. Their statements are no request's round trips.
const BACKGROUND_POOLS = new Set(['pagos-jobs', 'pagos-relay', 'notification-listener']);

interface ClientQueues {
  readonly connectionParameters?: { readonly application_name?: string };
  readonly _activeQuery?: unknown;
  readonly _queryQueue?: readonly unknown[];
  readonly _sentQueryQueue?: readonly unknown[];
}

/**
 * Counts round trips to PostgreSQL made for this process's requests (BACKGROUND_POOLS left out), by
 * wrapping node-postgres before the pool opens its first connection. A statement sent on a connection with nothing in flight waits for
 * its own answer: one round trip. A statement sent while earlier ones on that connection are still
 * unanswered (pipeline mode, e.g. BEGIN with a transaction's first statement) shares their round trip.
 * Reads node-postgres' queues (8.23), which have no public accessor.
 */
export function countRoundTrips(): () => number {
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (opensRequestRoundTrip(this as unknown as ClientQueues)) roundTrips++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return () => roundTrips;
}

function opensRequestRoundTrip(client: ClientQueues): boolean {
  if (BACKGROUND_POOLS.has(client.connectionParameters?.application_name ?? '')) return false;
  return !client._activeQuery && (client._queryQueue?.length ?? 0) === 0 && (client._sentQueryQueue?.length ?? 0) === 0;
}
