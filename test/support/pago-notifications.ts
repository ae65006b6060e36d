import pg from 'pg';
import { CANAL_PAGO_DECIDIDO } from '../../src/pagos/esperas-de-pago.js';
import { connect } from './test-database.js';

/** What one dedicated `LISTEN pago_decidido` connection received, by payment id. */
export interface PagoNotifications {
  count(id: string): number;
  /** Resolves once `id` was notified (at once if it already was). */
  notified(id: string): Promise<void>;
  close(): Promise<void>;
}

/** LISTENs as the service's listener does, on its own connection; the trigger's payload is the payment id. */
export async function listenForDecidedPagos(url: string): Promise<PagoNotifications> {
  const client = await connect(url);
  const counts = new Map<string, number>();
  const waiting = new Set<{ id: string; resolve: () => void }>();
  client.on('notification', ({ payload = '' }) => {
    counts.set(payload, (counts.get(payload) ?? 0) + 1);
    for (const waiter of [...waiting].filter((entry) => entry.id === payload)) {
      waiting.delete(waiter);
      waiter.resolve();
    }
  });
  await client.query(`LISTEN ${pg.escapeIdentifier(CANAL_PAGO_DECIDIDO)}`);
  const count = (id: string): number => counts.get(id) ?? 0;
  return {
    count,
    notified: (id) => (count(id) > 0 ? Promise.resolve() : new Promise((resolve) => waiting.add({ id, resolve }))),
    close: () => client.end(),
  };
}
