import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { pgPoolOf, type Queryable, queryRows } from '../database/query-rows.js';
import { Transactions } from '../database/transactions.js';
import { DELIVERY_TO_ATTEMPT, DISABLE_ENDPOINT, MARK_DELIVERED, MARK_FAILED } from './deliveries.sql.js';
import { JobQueue } from './job-queue.js';
import { postWebhook, type WebhookAnswer } from './webhook-http.js';
import { WEBHOOK_DELIVERY_OPTIONS, type WebhookDeliveryOptions } from './webhook-delivery.options.js';
import { WebhooksEvents } from './webhooks.events.js';

export const DELIVERY_QUEUE = 'webhook-delivery';

interface Delivery {
  readonly eventId: string;
  readonly endpointId: string;
}

/** A delivery to enqueue, with the client it is for: the job's group (fair delivery between clients). */
export interface ClientDelivery extends Delivery {
  readonly clientId: string;
}

interface DeliveryState {
  readonly attempts: number;
  readonly deliveredAt: Date | null;
  readonly disabledAt: Date | null;
  readonly url: string;
  readonly secret: string;
  readonly payload: string;
  readonly clientId: string;
}

/**
 * Attempts in flight per process: 4 fetch loops × 4 jobs; each waits at most the timeout on a
 * consumer. A loop fetches again only once its whole batch has ended, so one slow attempt holds its
 * loop for up to the timeout: fairness between clients comes from CLIENT_CONCURRENCY being smaller
 * than the loops. A client's attempts in flight, across every replica, are at most 3 (pg-boss's
 * groupConcurrency, the client id as the group): a client whose endpoints hang holds at most 3
 * loops, and every other client's deliveries go through the loops left (at least 1 per process,
 * woken by the job's NOTIFY). Measured (test/faults/webhook-fairness.fault-spec.ts: 120 hanging
 * attempts of one client, 2 s timeout): another client's event waited 14.1 s with 2 loops × 8 and no
 * group limit, 0.07–0.9 s with these polling every 0.5 s, 0.06–0.1 s woken (its own fan-out is most
 * of it). The price: one client's deliveries go at most 3 at a time (about 30/s to an endpoint
 * answering in 100 ms).
 */
const DELIVERY_WORKERS = 4;
const DELIVERY_BATCH = 4;
const CLIENT_CONCURRENCY = 3;

/**
 * At-least-once delivery of the outbox. The relay ({@link OutboxRelay}) fans committed events out to
 * one delivery per subscribed endpoint, each a job enqueued here; an attempt signs the stored body (Standard Webhooks: `webhook-id` is the event id, on every attempt)
 * and POSTs it. A 2xx acknowledges it; anything else is retried on the schedule, as a new job
 * enqueued with the failure's record; the last failure disables the endpoint. A worker killed
 * mid-attempt leaves its job active without heartbeats: pg-boss runs it again (the same
 * `webhook-id`), in this replica or another, never in two at once.
 */
@Injectable()
export class WebhookDeliverer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDeliverer.name);
  private readonly pool: pg.Pool;
  private readonly queue: JobQueue;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly events: WebhooksEvents,
    @Inject(WEBHOOK_DELIVERY_OPTIONS) private readonly options: WebhookDeliveryOptions,
  ) {
    this.pool = pgPoolOf(dataSource);
    // A run is presumed dead past its timeout with room to record the answer.
    const expireInSeconds = options.timeoutSeconds + 30;
    this.queue = new JobQueue(options.databaseUrl, {
      [DELIVERY_QUEUE]: { crashRetries: 10, expireInSeconds },
    }, options.work);
  }

  async onModuleInit(): Promise<void> {
    await this.queue.start();
    if (!this.options.work) return;
    const delivering = { workers: DELIVERY_WORKERS, batchSize: DELIVERY_BATCH, groupConcurrency: CLIENT_CONCURRENCY };
    await this.queue.work<Delivery>(DELIVERY_QUEUE, delivering, (delivery) => this.attempt(delivery));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.stop();
  }

  /** Enqueues the first attempt of each of `deliveries` on `db`'s transaction, in one statement. */
  async enqueueAll(db: Queryable, deliveries: readonly ClientDelivery[]): Promise<void> {
    await this.queue.sendAll(db, DELIVERY_QUEUE, deliveries.map(({ eventId, endpointId, clientId }) => ({ data: { eventId, endpointId }, group: clientId })));
  }

  /** Enqueues a new attempt of a delivery now (the operator's redelivery, or an enabled endpoint's backlog). */
  async enqueue(db: Parameters<JobQueue['send']>[0], delivery: ClientDelivery, startAfterSeconds = 0): Promise<void> {
    const { eventId, endpointId, clientId } = delivery;
    await this.queue.send(db, DELIVERY_QUEUE, { eventId, endpointId }, { startAfterSeconds, group: clientId });
  }

  private async attempt(delivery: Delivery): Promise<void> {
    const [state] = await queryRows<DeliveryState>(this.pool, DELIVERY_TO_ATTEMPT, [delivery.eventId, delivery.endpointId]);
    // Deleted, acknowledged meanwhile, or disabled (an operator enables it and redelivers).
    if (!state || state.deliveredAt || state.disabledAt) return;
    const sentAt = new Date();
    const headers = {
      'webhook-id': delivery.eventId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(state.secret).sign(delivery.eventId, sentAt, state.payload),
    };
    const answer = await postWebhook({ url: state.url, body: state.payload, headers, timeoutMs: this.options.timeoutSeconds * 1000, allowInsecure: this.options.allowInsecureUrls });
    if ('status' in answer && answer.status >= 200 && answer.status < 300) return this.acknowledge(delivery, answer.status);
    await this.fail(delivery, state.clientId, answer);
  }

  private async acknowledge(delivery: Delivery, status: number): Promise<void> {
    const [marked] = await queryRows<{ secondsSinceEvent: number }>(this.pool, MARK_DELIVERED, [delivery.eventId, delivery.endpointId, status]);
    this.events.attempt('delivered');
    if (marked) this.events.delivered(marked.secondsSinceEvent);
  }

  /** Counts the failure and, in the same transaction, enqueues the next attempt or disables the endpoint. */
  private async fail(delivery: Delivery, clientId: string, answer: WebhookAnswer): Promise<void> {
    const status = 'status' in answer ? answer.status : null;
    const error = 'status' in answer ? `HTTP ${answer.status}` : answer.error;
    const schedule = this.options.retryScheduleSeconds;
    const disabled = await this.transactions.run(async (db) => {
      const [failed] = await queryRows<{ attempts: number }>(db, MARK_FAILED, [delivery.eventId, delivery.endpointId, status, error]);
      if (!failed) return false;
      if (failed.attempts <= schedule.length) {
        await this.enqueue(db, { ...delivery, clientId }, schedule[failed.attempts - 1]);
        return false;
      }
      await queryRows(db, DISABLE_ENDPOINT, [delivery.endpointId]);
      return true;
    });
    this.events.attempt(disabled ? 'disabled' : 'failed');
    if (disabled) this.logger.warn(`webhook endpoint ${delivery.endpointId} disabled: event ${delivery.eventId} failed every attempt (${error})`);
  }
}
