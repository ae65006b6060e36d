import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { IDEMPOTENCY_OPTIONS, KEY_SETTLED_CHANNEL } from './idempotency.constants.js';
import { IdempotencyEvents } from './idempotency.events.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { KeyWaiters } from './key-waiters.js';

// Reconnects after 100 ms, doubling up to 5 s (with jitter, so replicas don't reconnect in step):
// waiters poll meanwhile, so a quick return matters more than sparing a database that refuses us.
const RECONNECT_BASE_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;
// TCP keep-alive probes start after 10 s of silence (the OS then takes minutes to give up).
const KEEP_ALIVE_DELAY_MS = 10_000;
// An open connection is not proof that notifications arrive: a half-open TCP connection (the OS's
// keep-alive takes minutes to notice), or a transaction-mode pooler that accepted the LISTEN on a
// session it then lends to others, deliver nothing. So after LISTEN and every 30 s the listener sends
// itself a notification through the pool, as the trigger would, and counts as down if it is not
// back within 5 s (generous: a busy database is not a broken listener). The cost: one NOTIFY per
// replica per 30 s, which every replica receives.
const PROBE_INTERVAL_MS = 30_000;
const PROBE_TIMEOUT_MS = 5_000;

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
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly probes = new Map<string, () => void>();
  private failedAttempts = 0;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly waiters: KeyWaiters,
    private readonly events: IdempotencyEvents,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
  ) {}

  /**
   * Start-up waits for the first attempt only; if it fails, the service starts and keeps trying.
   * With waiting turned off (a longest wait of 0) nobody would listen: no connection is opened.
   */
  async onApplicationBootstrap(): Promise<void> {
    this.events.listener(false);
    if (this.options.waiting.maxSeconds === 0) return;
    await this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.probeTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.waiting.listenUrl,
      application_name: 'idempotency-listener',
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
      if (!(await this.probe())) throw new Error('a test notification did not come back (DATABASE_LISTEN_URL through a transaction-mode pooler?)');
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
    this.probeTimer = setInterval(() => void this.probeListening(client), PROBE_INTERVAL_MS);
    this.probeTimer.unref();
  }

  /** Sends a notification through the pool and resolves whether the listening connection received it. */
  private async probe(): Promise<boolean> {
    const token = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const echoed = new Promise<boolean>((resolve) => {
      this.probes.set(token, () => resolve(true));
      timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
    });
    try {
      await this.dataSource.query('SELECT pg_notify($1::text, $2::text)', [KEY_SETTLED_CHANNEL, token]);
      return await echoed;
    } finally {
      clearTimeout(timer);
      this.probes.delete(token);
    }
  }

  private async probeListening(client: pg.Client): Promise<void> {
    // A failing pool is the database being away: the listener's own errors will tell.
    const echoed = await this.probe().catch(() => true);
    if (echoed || client !== this.client) return;
    this.lost(client, 'a test notification did not come back');
    await client.end().catch(() => undefined);
  }

  private lost(client: pg.Client, reason: string): void {
    if (client !== this.client) return;
    this.client = undefined;
    clearInterval(this.probeTimer);
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
    const probe = this.probes.get(message.payload ?? '');
    if (probe) return probe();
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
