import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { PAYMENT_GATEWAY, type PaymentGateway } from '../gateway/payment-gateway.js';
import type { ProcessorEvent } from '../gateway/processor-events.js';
import { type PreparedChange, ProcessorEventHandlers, type ProcessorEventHandler } from '../processor-webhooks/processor-event-handlers.js';
import { DesenlacesDePago } from './desenlaces-de-pago.js';
import { ESTADOS_EN_CURSO } from './pago.entity.js';
import { type PagoRow, toPago } from './pago-row.js';
import { PAGO_POR_INTENT } from './pagos.sql.js';

/** Every PaymentIntent event that may say a payment's outcome (the others say nothing we act on). */
export const EVENTOS_DE_INTENT = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.processing',
  'payment_intent.requires_action',
] as const;

const NADA = 'nothing to change';

/**
 * The processor's news about our payments' intents: an authentication finished on the phone, a
 * processing payment that settled. Whatever the event says, the intent is retrieved and its current
 * state decides (see {@link DesenlacesDePago}), so an older event can't undo a newer state.
 */
@Injectable()
export class PagosWebhookHandler implements ProcessorEventHandler, OnModuleInit {
  readonly types = EVENTOS_DE_INTENT;

  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
    private readonly desenlaces: DesenlacesDePago,
    private readonly handlers: ProcessorEventHandlers,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  onModuleInit(): void {
    this.handlers.register(this);
  }

  async prepare(event: ProcessorEvent): Promise<PreparedChange | undefined> {
    const [row] = await queryRows<PagoRow>(this.pool, PAGO_POR_INTENT, [event.objectId]);
    if (!row) return undefined;
    const pago = toPago(row);
    if (!ESTADOS_EN_CURSO.includes(pago.estado)) return { apply: async () => `${NADA}: payment ${pago.id} is ${pago.estado}` };
    const state = await this.gateway.retrieveIntent(event.objectId);
    return {
      apply: async (db) => {
        const decidida = await this.desenlaces.decidir(db, pago, state);
        return decidida ? `payment ${pago.id} ${pago.estado} → ${decidida.estado}` : `${NADA}: payment ${pago.id} stays ${pago.estado} (intent ${state.status})`;
      },
    };
  }
}
