import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { NotificationListener } from '../database/notification-listener.js';
import { IDEMPOTENCY_OPTIONS, KEY_SETTLED_CHANNEL } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { KeyWaiters } from './key-waiters.js';

/**
 * The idempotency mechanism's subscription to the process's LISTEN connection (`NotificationListener`):
 * passes each settled key on to the waiters, and whether notifications flow to them and to the
 * `idempotency_listener_connected` gauge; while they don't, waiters poll. With waiting turned off
 * (a longest wait of 0) nobody would wait: it does not subscribe.
 */
@Injectable()
export class KeySettledListener implements OnModuleInit {
  constructor(
    private readonly listener: NotificationListener,
    private readonly waiters: KeyWaiters,
    private readonly events: IdempotencyEvents,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
  ) {}

  /** Before any `onApplicationBootstrap`: the listener connects then, with every channel subscribed. */
  onModuleInit(): void {
    this.events.listener(false);
    if (this.options.waiting.maxSeconds === 0) return;
    this.listener.subscribe(KEY_SETTLED_CHANNEL, {
      notified: (payload) => {
        const settled = settledKeyOf(payload);
        if (settled) this.waiters.keySettled(settled[0], settled[1]);
      },
      setListening: (listening) => {
        this.events.listener(listening);
        this.waiters.setListening(listening);
      },
    });
  }
}

/** `[scope, key]` from the trigger's payload; undefined for anything else sent on the channel. */
function settledKeyOf(payload: string): [string, string] | undefined {
  try {
    const value: unknown = JSON.parse(payload);
    return Array.isArray(value) && value.length === 2 && value.every((part) => typeof part === 'string') ? [value[0], value[1]] : undefined;
  } catch {
    return undefined;
  }
}
