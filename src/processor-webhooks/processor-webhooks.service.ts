import { Inject, Injectable, Logger } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { Transactions } from '../database/transactions.js';
import { GatewayIndeterminateError } from '../gateway/payment-gateway.js';
import { PROCESSOR_EVENT_VERIFIER, type ProcessorEvent, ProcessorEventRejectedError, type ProcessorEventVerifier } from '../gateway/processor-events.js';
import { ProcessorEventHandlers } from './processor-event-handlers.js';
import { type ProcessorEventOutcome, ProcessorWebhooksEvents } from './processor-webhooks.events.js';
import { EventoProcesadorAplazadoError, EventoProcesadorInvalidoError } from './processor-webhooks.errors.js';
import { EVENTO_APLICADO, REGISTRAR_EVENTO } from './processor-webhooks.sql.js';

/**
 * Takes the processor's signed events in, each applied once: verified over the exact bytes received,
 * handed to the feature that owns its type, and recorded as applied in the same transaction as the
 * change it causes, so that a redelivery (the processor's retry after a lost answer, or after this
 * process died mid-way) changes nothing twice, and one that never committed is applied then.
 */
@Injectable()
export class ProcessorWebhooks {
  private readonly logger = new Logger(ProcessorWebhooks.name);
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly handlers: ProcessorEventHandlers,
    private readonly events: ProcessorWebhooksEvents,
    @Inject(PROCESSOR_EVENT_VERIFIER) private readonly verifier: ProcessorEventVerifier,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async receive(rawBody: Buffer | undefined, signature: string | undefined): Promise<ProcessorEventOutcome> {
    const event = this.verified(rawBody, signature);
    const outcome = await this.apply(event);
    this.events.received(outcome);
    return outcome;
  }

  private verified(rawBody: Buffer | undefined, signature: string | undefined): ProcessorEvent {
    try {
      return this.verifier.verify(rawBody ?? Buffer.alloc(0), signature);
    } catch (error) {
      if (!(error instanceof ProcessorEventRejectedError)) throw error;
      this.events.received('rejected');
      this.logger.warn(`processor event rejected: ${error.message}`);
      throw new EventoProcesadorInvalidoError(error.message);
    }
  }

  private async apply(event: ProcessorEvent): Promise<ProcessorEventOutcome> {
    const handler = this.handlers.handlerOf(event.type);
    if (!handler) return 'ignored';
    if ((await queryRows(this.pool, EVENTO_APLICADO, [event.id])).length > 0) return 'duplicate';
    const change = await this.prepared(event, handler.prepare.bind(handler));
    // Not about anything of ours (another integration on the same account): acknowledged, not recorded.
    if (!change) return 'ignored';
    const done = await this.transactions.run(async (db) => {
      const [registrado] = await queryRows(db, REGISTRAR_EVENTO, [event.id, event.type]);
      return registrado ? change.apply(db) : undefined;
    });
    if (done === undefined) return 'duplicate';
    this.logger.log(`processor event ${event.id} (${event.type}, ${event.objectId}): ${done}`);
    return 'applied';
  }

  private async prepared<T>(event: ProcessorEvent, prepare: (event: ProcessorEvent) => Promise<T>): Promise<T> {
    try {
      return await prepare(event);
    } catch (error) {
      if (!(error instanceof GatewayIndeterminateError)) throw error;
      this.events.received('postponed');
      this.logger.warn(`processor event ${event.id} (${event.type}) postponed: ${error.message}`);
      throw new EventoProcesadorAplazadoError();
    }
  }
}
