import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Transaction } from '../database/query-rows.js';
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
 * Writes declared events into the transaction they announce, and nothing else: whatever delivers
 * them (the webhooks' relay) takes them from the table once committed, out of the requests' way.
 * Knows nothing of payments: features call it with their transaction.
 */
@Injectable()
export class Outbox {
  /**
   * Queues the event's INSERT on `db` without waiting for it: it goes out with the transaction's next
   * statement or its COMMIT, and should it fail, the transaction rolls back and its commit rejects.
   */
  record(db: Transaction, event: DeclaredEvent): RecordedEvent {
    const id = newEventId();
    const payload = JSON.stringify({ id, type: event.type, timestamp: new Date().toISOString(), data: event.data });
    db.send(INSERT_EVENT, [id, event.clientId, event.type, payload]);
    return { id, payload };
  }
}
