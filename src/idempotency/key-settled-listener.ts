import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { IDEMPOTENCY_OPTIONS, KEY_SETTLED_CHANNEL } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { KeyWaiters } from './key-waiters.js';

// Reconnects after 100 ms, doubling up to 5 s (with jitter, so replicas don't reconnect in step):
// waiters poll meanwhile, so a quick return matters more than sparing a database that refuses us.
const RECONNECT_BASE_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;
// A connection cut without a FIN/RST (a dead host) is noticed by TCP keep-alive after about this long.
const KEEP_ALIVE_DELAY_MS = 10_000;

/**
 * The process's one `LISTEN` connection, outside the pool (PgBouncer in transaction mode can't carry
 * a session's LISTEN: point `listenUrl` at PostgreSQL itself). Passes each settled key on to the
 * waiters; when the connection drops, waiters fall back to polling until it is back.
 */
@Injectable()
export class KeySettledListener implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(KeySettledListener.name);
  private client: pg.Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failedAttempts = 0;
  private stopped = false;

  constructor(
    private readonly waiters: KeyWaiters,
    private readonly events: IdempotencyEvents,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
  ) {}

  /** Start-up waits for the first attempt only; if it fails, the service starts and keeps trying. */
  async onApplicationBootstrap(): Promise<void> {
    this.events.listener(false);
    await this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.waiting.listenUrl,
      application_name: 'pagos-listen',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEP_ALIVE_DELAY_MS,
    });
    client.on('error', (error) => this.lost(client, error.message));
    client.on('end', () => this.lost(client, 'connection closed'));
    client.on('notification', (message) => this.received(message));
    try {
      await client.connect();
      // The channel is a constant identifier, never input.
      await client.query(`LISTEN ${KEY_SETTLED_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      this.retryLater(`could not listen for settled keys: ${(error as Error).message}`);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    if (this.failedAttempts > 0) this.logger.log('listening for settled keys again');
    this.failedAttempts = 0;
    this.events.listener(true);
    this.waiters.setListening(true);
  }

  private lost(client: pg.Client, reason: string): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.events.listener(false);
    this.waiters.setListening(false);
    this.retryLater(`listening connection lost (${reason}); waiters poll until it is back`);
  }

  private retryLater(message: string): void {
    if (this.stopped) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** this.failedAttempts) * (0.5 + Math.random() / 2);
    this.failedAttempts++;
    this.logger.warn(`${message}; retrying in ${Math.round(delay)} ms`);
    this.reconnectTimer = setTimeout(() => void this.connect(), delay);
    this.reconnectTimer.unref();
  }

  private received(message: pg.Notification): void {
    if (message.channel !== KEY_SETTLED_CHANNEL) return;
    const settled = settledKeyOf(message.payload);
    if (settled) this.waiters.keySettled(settled[0], settled[1]);
  }
}

/** `[scope, key]` from the trigger's payload; undefined for anything else sent on the channel. */
function settledKeyOf(payload: string | undefined): [string, string] | undefined {
  try {
    const value: unknown = JSON.parse(payload ?? '');
    return Array.isArray(value) && value.length === 2 && value.every((part) => typeof part === 'string') ? [value[0], value[1]] : undefined;
  } catch {
    return undefined;
  }
}
