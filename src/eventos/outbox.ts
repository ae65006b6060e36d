import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { Queryable } from '../database/query-rows.js';
import { INSERT_EVENT } from './eventos.sql.js';

/**
 * Glossary. An *event* announces a state change that committed (`pago.aprobado`); a feature
 * *declares* it (its type, its client, its `data`: the resource exactly as the API shows it) and the
 * outbox writes it in the same transaction as the change. Its *payload* is the body every delivery
 * and the feed carry, per Standard Webhooks: `{ id, type, timestamp, data }`.
 */
export interface DeclaredEvent {
  readonly clientId: string;
  /** `<resource>.<what happened>`, lower case (the table's CHECK). */
  readonly type: string;
  /** The resource as the API answers it (its response DTO). */
  readonly data: unknown;
}

/** What the outbox wrote: the id every delivery carries as `webhook-id`, and the delivered body. */
export interface RecordedEvent {
  readonly id: string;
  readonly payload: string;
}

export function newEventId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`;
}

/**
 * Writes declared events into the transaction they announce. Knows nothing of payments: features
 * call it with their transaction's `db`.
 */
/** Runs on the event's transaction right after its INSERT (a delivery module enqueues its job there). */
export type RecordedEventListener = (db: Queryable, event: RecordedEvent & { readonly clientId: string; readonly type: string }) => Promise<void>;

@Injectable()
export class Outbox {
  private readonly logger = new Logger(Outbox.name);
  private readonly listeners: RecordedEventListener[] = [];

  /** Registers a listener (at module init): whatever it writes on `db` commits or rolls back with the event. */
  onRecorded(listener: RecordedEventListener): void {
    this.listeners.push(listener);
  }

  /**
   * Sends the event's INSERT on `db` (an open transaction) without waiting for its answer: it shares
   * the round trip of the statement that follows it (the listeners' job, or the key's completion and
   * COMMIT). Its failure can't go unnoticed: PostgreSQL then refuses every later statement of the
   * transaction and answers its COMMIT with ROLLBACK, which `Transactions` turns into an error. `db`
   * must be a transaction, never the pool. Resolves once the listeners have written their part.
   */
  async record(db: Queryable, event: DeclaredEvent): Promise<RecordedEvent> {
    const id = newEventId();
    const payload = JSON.stringify({ id, type: event.type, timestamp: new Date().toISOString(), data: event.data });
    db.query(INSERT_EVENT, [id, event.clientId, event.type, payload]).catch((error: unknown) => {
      this.logger.error(`event ${id} (${event.type}) was not written, so its transaction rolls back: ${(error as Error).message}`);
    });
    for (const listener of this.listeners) await listener(db, { id, payload, clientId: event.clientId, type: event.type });
    return { id, payload };
  }
}
