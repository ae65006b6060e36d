import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, type Transaction, queryRows } from '../database/query-rows.js';
import { Outbox } from '../eventos/outbox.js';
import { PAYMENT_GATEWAY, type PaymentGateway, type Refund } from '../gateway/payment-gateway.js';
import { type AbandonedOperationKind, type PendingOperation, type Settlement, UNDECIDED } from '../pagos/abandoned-operations.js';
import { PagosEvents, type ReconcileResult } from '../pagos/pagos.events.js';
import { PagosReconciler } from '../pagos/pagos-reconciler.js';
import { isLive, refundMadeFor } from './processor-refunds.js';
import type { Reembolso } from './reembolso.entity.js';
import { storedAnswerOf } from './reembolso-answers.js';
import { eventoDeReembolso } from './reembolso-eventos.js';
import { type ReembolsoRow, toReembolso } from './reembolso-row.js';
import { ReembolsosEvents } from './reembolsos.events.js';
import { CONCILIAR_REEMBOLSO_APROBADO, CONCILIAR_REEMBOLSO_FALLIDO, REEMBOLSOS_PENDIENTES_DESDE } from './reembolsos.sql.js';

/**
 * Refunds as the reconciler settles them. One whose processor refund was recorded (the route
 * answered 202: pending) is retrieved by its id; any other is looked for among the intent's refunds
 * by its metadata. Succeeded → APROBADO with the route's answer; still pending → left for the next
 * pass; failed, canceled or never made → FALLIDO (the amount goes back to the payment) and the key
 * released, so a retry runs the refund again under a new key. "Never made" is the one guess: a
 * refund the processor made but does not list after the lock timeout would be refunded again.
 * Registers itself with the payments' reconciler, which knows nothing of refunds.
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
    private readonly pagosEvents: PagosEvents,
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

  /**
   * A 404 for a recorded refund, or a 5xx, is an answer about this row only: it throws, and the pass
   * skips the row (see AbandonedOperations) and goes on.
   */
  async ask(reembolso: Reembolso): Promise<Refund | undefined | typeof UNDECIDED> {
    const refund = reembolso.gatewayRefundId ? await this.gateway.retrieveRefund(reembolso.gatewayRefundId) : await refundMadeFor(this.gateway, reembolso);
    if (refund?.status === 'pending') return UNDECIDED;
    return refund && isLive(refund) ? refund : undefined;
  }

  /** Recorded pending: the key already holds the route's 202, which stays its answer (a retry replays it). */
  keyAnswered(reembolso: Reembolso): boolean {
    return reembolso.gatewayRefundId !== null;
  }

  async write(db: Transaction, { item }: PendingOperation<Reembolso>, version: string, refund: Refund | undefined): Promise<Settlement | undefined> {
    if (!refund) {
      const [fallido] = await queryRows<ReembolsoRow>(db, CONCILIAR_REEMBOLSO_FALLIDO, [item.id, version]);
      if (!fallido) return undefined;
      this.outbox.record(db, eventoDeReembolso(toReembolso(fallido)));
      return { result: 'failed', answer: undefined };
    }
    const [row] = await queryRows<ReembolsoRow>(db, CONCILIAR_REEMBOLSO_APROBADO, [item.id, refund.id, version]);
    if (!row) return undefined;
    const aprobado = toReembolso(row);
    this.outbox.record(db, eventoDeReembolso(aprobado));
    return { result: 'approved', answer: storedAnswerOf(aprobado) };
  }

  /** Settlements count as refunds; a row skipped or a processor out of reach counts with the reconciler's. */
  report(result: ReconcileResult): void {
    if (result === 'approved' || result === 'failed') this.events.refund(result);
    else this.pagosEvents.reconciled(result);
  }
}
