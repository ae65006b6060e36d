import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { SESSION_DATABASE_URL } from './session-database-url.js';

/** What a feature hands the listener for its channel. */
export interface ChannelSubscriber {
  /** A notification's payload (the listener's own probes never reach a subscriber). */
  notified(payload: string): void;
  /** Notifications start (true) or stop (false) arriving on the connection: while false, poll. */
  setListening(listening: boolean): void;
}

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
// itself a notification through the pool, as a trigger would, and counts as down if it is not
// back within 5 s (generous: a busy database is not a broken listener). The cost: one NOTIFY per
// replica per 30 s, which every replica receives. On a channel of its own, so that no subscriber
// ever parses another replica's probe.
const PROBE_INTERVAL_MS = 30_000;
const PROBE_TIMEOUT_MS = 5_000;
const PROBE_CHANNEL = 'notification_listener_probe';

/**
 * The process's one `LISTEN` connection, outside the pool (PgBouncer in transaction mode can't carry
 * a session's LISTEN: point the listen URL at PostgreSQL itself), shared by every feature that waits
 * for a trigger's notification. Features subscribe to their channel before the application
 * bootstraps (in `onModuleInit`); with no subscriber no connection is opened. Passes each payload to
 * its channel's subscribers, and tells them whenever notifications stop or start flowing.
 *
 * @example
 *   onModuleInit() { this.listener.subscribe('pago_decidido', { notified: (id) => …, setListening: (up) => … }); }
 */
@Injectable()
export class NotificationListener implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(NotificationListener.name);
  private readonly subscribers = new Map<string, ChannelSubscriber[]>();
  private client: pg.Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly probes = new Map<string, () => void>();
  private failedAttempts = 0;
  private bootstrapped = false;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(SESSION_DATABASE_URL) private readonly listenUrl: string,
  ) {}

  /** `channel` is a constant of the feature's migration, never input. */
  subscribe(channel: string, subscriber: ChannelSubscriber): void {
    if (this.bootstrapped) throw new Error(`subscribe to ${channel} before the application bootstraps (in onModuleInit)`);
    this.subscribers.set(channel, [...(this.subscribers.get(channel) ?? []), subscriber]);
  }

  /** Start-up waits for the first attempt only; if it fails, the service starts and keeps trying. */
  async onApplicationBootstrap(): Promise<void> {
    this.bootstrapped = true;
    if (this.subscribers.size === 0) return;
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
      connectionString: this.listenUrl,
      application_name: 'notification-listener',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEP_ALIVE_DELAY_MS,
    });
    client.on('error', (error) => this.lost(client, error.message));
    client.on('end', () => this.lost(client, 'connection closed'));
    client.on('notification', (message) => this.received(message));
    try {
      await client.connect();
      for (const channel of [PROBE_CHANNEL, ...this.subscribers.keys()]) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      if (!(await this.probe())) throw new Error('a test notification did not come back (DATABASE_LISTEN_URL through a transaction-mode pooler?)');
    } catch (error) {
      await client.end().catch(() => undefined);
      this.retryLater(`could not listen for notifications: ${(error as Error).message}`);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    if (this.failedAttempts > 0) this.logger.log('listening for notifications again');
    this.failedAttempts = 0;
    this.tellListening(true);
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
      await this.dataSource.query('SELECT pg_notify($1::text, $2::text)', [PROBE_CHANNEL, token]);
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
    this.tellListening(false);
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

  private tellListening(listening: boolean): void {
    for (const subscriber of [...this.subscribers.values()].flat()) subscriber.setListening(listening);
  }

  private received(message: pg.Notification): void {
    const payload = message.payload ?? '';
    if (message.channel === PROBE_CHANNEL) return this.probes.get(payload)?.();
    for (const subscriber of this.subscribers.get(message.channel) ?? []) subscriber.notified(payload);
  }
}
