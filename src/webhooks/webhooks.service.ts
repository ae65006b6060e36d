import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { type DeferredCommit, Transactions } from '../database/transactions.js';
import { RequestValidationError } from '../http/http.errors.js';
import { refusalOf } from './url-policy.js';
import type { WebhookEndpoint } from './webhook-endpoint.js';
import { LimiteDeWebhooksError, UrlDeWebhookNoPermitidaError } from './webhooks.errors.js';
import { WEBHOOKS_OPTIONS, type WebhooksOptions } from './webhooks.options.js';
import { DELETE_ENDPOINT, ENDPOINT_BY_ID, ENDPOINTS_OF_CLIENT, ENDPOINTS_OF_CLIENT_AFTER, INSERT_ENDPOINT, LOCK_CLIENT_REGISTRATIONS } from './webhooks.sql.js';

export interface NewEndpoint {
  readonly clientId: string;
  readonly url: string;
  readonly eventTypes: readonly string[];
}

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64 (192 bits). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

@Injectable()
export class WebhooksService {
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    @Inject(WEBHOOKS_OPTIONS) private readonly options: WebhooksOptions,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  /** Registers an endpoint; its secret is returned here only. Joins `commit` (the key's stored answer) when given. */
  async create(endpoint: NewEndpoint, commit?: DeferredCommit): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const unknown = endpoint.eventTypes.filter((type) => !this.options.eventTypes.includes(type));
    if (unknown.length > 0) throw new RequestValidationError(unknown.map((type) => `eventos: ${type} is not an event type (${this.options.eventTypes.join(', ')})`));
    const refusal = await refusalOf(endpoint.url, this.options.allowInsecureUrls);
    if (refusal) throw new UrlDeWebhookNoPermitidaError(refusal);
    const secret = newWebhookSecret();
    const params = [randomUUID(), endpoint.clientId, endpoint.url, [...new Set(endpoint.eventTypes)], secret, this.options.maxPerClient];
    const [created] = await this.transactions.runJoinable(async (db) => {
      await queryRows(db, LOCK_CLIENT_REGISTRATIONS, [endpoint.clientId]);
      return queryRows<WebhookEndpoint>(db, INSERT_ENDPOINT, params);
    }, commit);
    if (!created) throw new LimiteDeWebhooksError(this.options.maxPerClient);
    return { endpoint: created, secret };
  }

  /** The client's endpoints after `after` (oldest first); undefined when `after` is not one of theirs. */
  async list(clientId: string, after: string | undefined, limit: number): Promise<WebhookEndpoint[] | undefined> {
    if (after === undefined) return queryRows<WebhookEndpoint>(this.pool, ENDPOINTS_OF_CLIENT, [clientId, limit]);
    if (!(await this.findOne(clientId, after))) return undefined;
    return queryRows<WebhookEndpoint>(this.pool, ENDPOINTS_OF_CLIENT_AFTER, [clientId, limit, after]);
  }

  async findOne(clientId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const [endpoint] = await queryRows<WebhookEndpoint>(this.pool, ENDPOINT_BY_ID, [id, clientId]);
    return endpoint;
  }

  async remove(clientId: string, id: string): Promise<boolean> {
    return (await queryRows(this.pool, DELETE_ENDPOINT, [id, clientId])).length === 1;
  }
}
