import pg from 'pg';

let roundTrips = 0;

/**
 * Counts every statement sent to PostgreSQL by this process (each `Client#query` is one round trip),
 * by wrapping node-postgres before the pool opens its first connection.
 */
export function countRoundTrips(): () => number {
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    roundTrips++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return () => roundTrips;
}
