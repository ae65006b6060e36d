import { Inject, Injectable } from '@nestjs/common';
import { NotificationWaiters, type Watch } from '../database/notification-waiters.js';
import { IDEMPOTENCY_OPTIONS } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import type { IdempotencyOptions } from './idempotency.options.js';

/**
 * The duplicates of this process that wait for a key in flight to settle, by key, at most
 * `maxWaiters` at once (counted in `IdempotencyEvents.waiters`). The settled-key subscription tells
 * it which keys settled and whether notifications flow. Holds no database connection.
 */
@Injectable()
export class KeyWaiters extends NotificationWaiters {
  constructor(events: IdempotencyEvents, @Inject(IDEMPOTENCY_OPTIONS) options: IdempotencyOptions) {
    super(options.waiting.maxWaiters, (waiting) => events.waiters(waiting));
  }

  watch(scope: string, key: string): Watch {
    return this.watchFor(keyId(scope, key));
  }

  keySettled(scope: string, key: string): void {
    this.notified(keyId(scope, key));
  }
}

/** Unambiguous for any scope and key: the JSON array the trigger sends, as JavaScript writes it. */
export function keyId(scope: string, key: string): string {
  return JSON.stringify([scope, key]);
}
