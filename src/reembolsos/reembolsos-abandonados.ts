import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, type Queryable, queryRows } from '../database/query-rows.js';
import { Outbox } from '../eventos/outbox.js';
import { PAYMENT_GATEWAY, type PaymentGateway, type Refund } from '../gateway/payment-gateway.js';
import type { AbandonedOperationKind, PendingOperation, Settlement } from '../pagos/abandoned-operations.js';
import type { ReconcileResult } from '../pagos/pagos.events.js';
import { PagosReconciler } from '../pagos/pagos-reconciler.js';
import { refundMadeFor } from './processor-refunds.js';
import type { Reembolso } from './reembolso.entity.js';
import { storedAnswerOf } from './reembolso-answers.js';
import { eventoDeReembolso } from './reembolso-eventos.js';
import { type ReembolsoRow, toReembolso } from './reembolso-row.js';
import { ReembolsosEvents } from './reembolsos.events.js';
import { CONCILIAR_REEMBOLSO_APROBADO, CONCILIAR_REEMBOLSO_FALLIDO, REEMBOLSOS_PENDIENTES_DESDE } from './reembolsos.sql.js';

/**
 * Refunds as the reconciler settles them: the intent's refunds are listed and the operation's found
 * by its metadata; refunded → APROBADO with the route's answer, never refunded → FALLIDO (the amount
 * goes back to the payment) and the key released, so a retry runs the refund again. Registers itself with the
 * payments' reconciler, which knows nothing of refunds.
 */
@Injectable()
export class ReembolsosAbandonados implements AbandonedOperationKind<Reembolso, Refund | undefined>, OnModuleInit {
  readonly tabla = 'reembolsos';

  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
    private readonly reconciler: PagosReconciler,
    private readonly events: ReembolsosEvents,
    private readonly outbox: Outbox,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  onModuleInit(): void {
    this.reconciler.register(this);
  }

  async stale(olderThanSeconds: number, after: string, limit: number): Promise<Array<PendingOperation<Reembolso>>> {
    const rows = await queryRows<ReembolsoRow & { version: string }>(this.pool, REEMBOLSOS_PENDIENTES_DESDE, [olderThanSeconds, after, limit]);
    return rows.map(({ version, ...row }) => {
      const reembolso = toReembolso(row);
      const summary = `reembolso ${reembolso.id}  client ${reembolso.clientId}  pago ${reembolso.pagoId}  ${reembolso.monto} ${reembolso.moneda}`;
      return { item: reembolso, id: reembolso.id, operationId: reembolso.operationId, version, actualizadoEn: reembolso.actualizadoEn, summary };
    });
  }

  ask(reembolso: Reembolso): Promise<Refund | undefined> {
    return refundMadeFor(this.gateway, reembolso);
  }

  async write(db: Queryable, { item }: PendingOperation<Reembolso>, version: string, refund: Refund | undefined): Promise<Settlement | undefined> {
    if (!refund) {
      const [fallido] = await queryRows<ReembolsoRow>(db, CONCILIAR_REEMBOLSO_FALLIDO, [item.id, version]);
      if (!fallido) return undefined;
      await this.outbox.record(db, eventoDeReembolso(toReembolso(fallido)));
      return { result: 'failed', answer: undefined };
    }
    const [row] = await queryRows<ReembolsoRow>(db, CONCILIAR_REEMBOLSO_APROBADO, [item.id, refund.id, version]);
    if (!row) return undefined;
    const aprobado = toReembolso(row);
    await this.outbox.record(db, eventoDeReembolso(aprobado));
    return { result: 'approved', answer: storedAnswerOf(aprobado) };
  }

  report(result: ReconcileResult): void {
    if (result === 'approved' || result === 'failed') this.events.refund(result);
  }
}
