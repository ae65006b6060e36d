import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import { ListenedPgClient } from '../database/listened-pg-client.js';
import { queryRows } from '../database/query-rows.js';
import { TransactionRunner } from '../database/transactions.js';
import { FAN_OUT_EVENTS, TAKE_EVENTS_TO_FAN_OUT } from './deliveries.sql.js';
import { type ClientDelivery, WebhookDeliverer } from './webhook-deliverer.js';
import { WEBHOOK_DELIVERY_OPTIONS, type WebhookDeliveryOptions } from './webhook-delivery.options.js';

// Events per relay transaction; a full batch is followed by the next at once.
const RELAY_BATCH = 100;
// How long an idle relay waits before looking again: an event's first attempt starts within this.
const IDLE_MS = 200;

/**
 * Moves committed events from the outbox to their deliveries, out of the requests' way: a request
 * writes its event and nothing more, and this relay, in every replica, takes the oldest events not
 * fanned out yet (one replica each), creates their deliveries and enqueues a job per delivery, in
 * one transaction per batch. A relay that dies mid-batch commits nothing, and the next takes the
 * batch again. On a small pool of its own, like the job queue's, so it never waits behind requests.
 */
@Injectable()
export class OutboxRelay implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private readonly pool: pg.Pool;
  private readonly transactions: TransactionRunner;
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    private readonly deliverer: WebhookDeliverer,
    @Inject(WEBHOOK_DELIVERY_OPTIONS) private readonly options: WebhookDeliveryOptions,
  ) {
    // Pipeline mode (pg 8.23, not in its types yet), as the API's pool: Transactions relies on it. A
    // connection lost while checked out must not raise an unhandled 'error' (ListenedPgClient).
    const config = { connectionString: options.databaseUrl, max: 1, application_name: 'pagos-relay', keepAlive: true, pipeline: true, Client: ListenedPgClient };
    this.pool = new pg.Pool(config);
    // An idle connection the server closed (a restart): the pool drops it and opens another when needed.
    this.pool.on('error', (error) => this.logger.warn(`relay connection lost: ${error.message}`));
    this.transactions = new TransactionRunner(this.pool);
  }

  onModuleInit(): void {
    if (this.options.work) this.running = this.relayUntilStopped();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await this.running;
    await this.pool.end();
  }

  /** Relays one batch; resolves how many events it took (0: nothing was waiting). */
  relayBatch(): Promise<number> {
    return this.transactions.run(async (db) => {
      const events = await queryRows<{ id: string }>(db, TAKE_EVENTS_TO_FAN_OUT, [RELAY_BATCH]);
      if (events.length === 0) return 0;
      const deliveries = await queryRows<ClientDelivery>(db, FAN_OUT_EVENTS, [events.map((event) => event.id)]);
      await this.deliverer.enqueueAll(db, deliveries);
      return events.length;
    });
  }

  private async relayUntilStopped(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const relayed = await this.relayBatch().catch((error: unknown) => {
        this.logger.error(`relaying events failed, to be retried: ${(error as Error).message}`);
        return 0;
      });
      if (relayed < RELAY_BATCH) await sleep(IDLE_MS, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    }
  }
}
