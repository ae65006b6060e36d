import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { PAYMENT_GATEWAY, type PaymentGateway } from '../gateway/payment-gateway.js';
import type { ProcessorEvent } from '../gateway/processor-events.js';
import { type PreparedChange, ProcessorEventHandlers, type ProcessorEventHandler } from '../processor-webhooks/processor-event-handlers.js';
import { DesenlacesDeReembolso } from './desenlaces-de-reembolso.js';
import { type ReembolsoRow, toReembolso } from './reembolso-row.js';
import { REEMBOLSO_POR_REFUND_PROCESADOR } from './reembolsos-procesador.sql.js';

/** Every Refund event that may say a refund's outcome; each carries the refund as `data.object`. */
export const EVENTOS_DE_REEMBOLSO = ['refund.created', 'refund.updated', 'refund.failed', 'charge.refund.updated'] as const;

const NADA = 'nothing to change';

/**
 * The processor's news about our refunds: a pending refund that settled, an accepted one that failed
 * later. Found by the processor's refund id, which we record as soon as the processor answers (an
 * event about a refund not recorded yet is not ours to act on: the reconciler settles that refund
 * after the lock timeout). Whatever the event says, the refund is retrieved and its current status
 * decides (see {@link DesenlacesDeReembolso}), so an older event can't undo a newer state.
 */
@Injectable()
export class ReembolsosWebhookHandler implements ProcessorEventHandler, OnModuleInit {
  readonly types = EVENTOS_DE_REEMBOLSO;

  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
    private readonly desenlaces: DesenlacesDeReembolso,
    private readonly handlers: ProcessorEventHandlers,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  onModuleInit(): void {
    this.handlers.register(this);
  }

  async prepare(event: ProcessorEvent): Promise<PreparedChange | undefined> {
    const [row] = await queryRows<ReembolsoRow>(this.pool, REEMBOLSO_POR_REFUND_PROCESADOR, [event.objectId]);
    if (!row) return undefined;
    const reembolso = toReembolso(row);
    // FALLIDO is final for this refund at the processor (a failed refund never succeeds again).
    if (reembolso.estado === 'FALLIDO') return { apply: async () => `${NADA}: refund ${reembolso.id} is FALLIDO` };
    const refund = await this.gateway.retrieveRefund(event.objectId);
    return {
      apply: async (db) => {
        const decidido = await this.desenlaces.decidir(db, reembolso, refund);
        return decidido
          ? `refund ${reembolso.id} ${reembolso.estado} → ${decidido.estado}`
          : `${NADA}: refund ${reembolso.id} stays ${reembolso.estado} (processor: ${refund.status})`;
      },
    };
  }
}
