import { Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { Transactions } from '../database/transactions.js';
import {
  ENABLE_ENDPOINT, EVENT_EXISTS, FAILING_DELIVERIES, RESTART_ENDPOINT_DELIVERIES, RESTART_EVENT_DELIVERIES,
} from './deliveries.sql.js';
import { WebhookDeliverer } from './webhook-deliverer.js';

export interface FailingDelivery {
  readonly eventId: string;
  readonly type: string;
  readonly clientId: string;
  readonly endpointId: string;
  readonly url: string;
  readonly attempts: number;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly lastAttemptAt: Date | null;
  readonly createdAt: Date;
  readonly disabledAt: Date | null;
}

/** What an operator does with deliveries (`npm run ops -- webhooks …`); every change and its jobs commit together. */
@Injectable()
export class WebhookOperations {
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly deliverer: WebhookDeliverer,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  failing(limit: number): Promise<FailingDelivery[]> {
    return queryRows<FailingDelivery>(this.pool, FAILING_DELIVERIES, [limit]);
  }

  /** Delivers the event again to every active endpoint subscribed to it; undefined when there is no such event. */
  async redeliver(eventId: string): Promise<string[] | undefined> {
    if ((await queryRows(this.pool, EVENT_EXISTS, [eventId])).length === 0) return undefined;
    return this.transactions.run(async (db) => {
      const endpoints = await queryRows<{ endpointId: string; clientId: string }>(db, RESTART_EVENT_DELIVERIES, [eventId]);
      for (const { endpointId, clientId } of endpoints) await this.deliverer.enqueue(db, { eventId, endpointId, clientId });
      return endpoints.map((endpoint) => endpoint.endpointId);
    });
  }

  /** Enables a disabled endpoint and starts its backlog over; undefined when it was not disabled (or does not exist). */
  async enable(endpointId: string): Promise<number | undefined> {
    return this.transactions.run(async (db) => {
      if ((await queryRows(db, ENABLE_ENDPOINT, [endpointId])).length === 0) return undefined;
      const backlog = await queryRows<{ eventId: string; clientId: string }>(db, RESTART_ENDPOINT_DELIVERIES, [endpointId]);
      for (const { eventId, clientId } of backlog) await this.deliverer.enqueue(db, { eventId, endpointId, clientId });
      return backlog.length;
    });
  }
}
