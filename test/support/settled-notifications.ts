import { KEY_SETTLED_CHANNEL } from '../../src/idempotency/idempotency.constants.js';
import { connect } from './test-database.js';

/** What one dedicated `LISTEN` connection received on the settled-key channel, by key. */
export interface SettledNotifications {
  /** How many notifications named `key` so far. */
  count(key: string): number;
  /** Resolves once `key` was notified `times` times (at once if it already was). */
  notified(key: string, times?: number): Promise<void>;
  close(): Promise<void>;
}

/** LISTENs as the service's listener does, on its own connection; the trigger's payload is `[scope, key]`. */
export async function listenForSettledKeys(url: string): Promise<SettledNotifications> {
  const client = await connect(url);
  const counts = new Map<string, number>();
  const waiting = new Set<{ key: string; times: number; resolve: () => void }>();
  client.on('notification', (message) => {
    const [, key] = JSON.parse(message.payload ?? '[]') as [string, string];
    counts.set(key, (counts.get(key) ?? 0) + 1);
    for (const waiter of [...waiting]) {
      if (waiter.key === key && counts.get(key)! >= waiter.times) {
        waiting.delete(waiter);
        waiter.resolve();
      }
    }
  });
  await client.query(`LISTEN ${KEY_SETTLED_CHANNEL}`);
  const count = (key: string): number => counts.get(key) ?? 0;
  return {
    count,
    notified: (key, times = 1) =>
      count(key) >= times ? Promise.resolve() : new Promise((resolve) => waiting.add({ key, times, resolve })),
    close: () => client.end(),
  };
}
