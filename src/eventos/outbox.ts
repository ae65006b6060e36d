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
@Injectable()
export class Outbox {
  private readonly logger = new Logger(Outbox.name);

  /**
   * Sends the event's INSERT on `db` (an open transaction) without waiting for its answer: it shares
   * the round trip of the statement that follows it (the key's completion and COMMIT), so a first
   * execution pays no extra round trip. Its failure can't go unnoticed: PostgreSQL then refuses
   * every later statement of the transaction and answers its COMMIT with ROLLBACK, which
   * `Transactions` turns into an error. `db` must be a transaction, never the pool.
   */
  record(db: Queryable, event: DeclaredEvent): RecordedEvent {
    const id = newEventId();
    const payload = JSON.stringify({ id, type: event.type, timestamp: new Date().toISOString(), data: event.data });
    db.query(INSERT_EVENT, [id, event.clientId, event.type, payload]).catch((error: unknown) => {
      this.logger.error(`event ${id} (${event.type}) was not written, so its transaction rolls back: ${(error as Error).message}`);
    });
    return { id, payload };
  }
}
