import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, type Queryable, queryRows } from '../database/query-rows.js';
import { type Charge, PAYMENT_GATEWAY, type PaymentGateway } from '../gateway/payment-gateway.js';
import type { AbandonedOperationKind, PendingOperation, Settlement } from './abandoned-operations.js';
import { chargeKeyOf, type EstadoPago, type Pago } from './pago.entity.js';
import { storedAnswerOf } from './pago-answers.js';
import { type PagoRow, toPago } from './pago-row.js';
import { PagosEvents, type ReconcileResult } from './pagos.events.js';
import { CONCILIAR_PAGO, CONTAR_PENDIENTES_DESDE, PAGOS_PENDIENTES_DESDE } from './pagos.sql.js';

/**
 * Payments as the reconciler settles them: the processor is asked about the operation's charge key;
 * charged → APROBADO or RECHAZADO with the route's answer, never charged → FALLIDO and the key released.
 */
@Injectable()
export class PagosAbandonados implements AbandonedOperationKind<Pago, Charge | undefined> {
  readonly tabla = 'pagos';

  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
    private readonly events: PagosEvents,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async stale(olderThanSeconds: number, after: string, limit: number): Promise<Array<PendingOperation<Pago>>> {
    const rows = await queryRows<PagoRow & { version: string }>(this.pool, PAGOS_PENDIENTES_DESDE, [olderThanSeconds, after, limit]);
    return rows.map(({ version, ...row }) => {
      const pago = toPago(row);
      const summary = `pago ${pago.id}  client ${pago.clientId}  order ${pago.numeroOrden}  ${pago.monto} ${pago.moneda}`;
      return { item: pago, id: pago.id, operationId: pago.operationId, version, actualizadoEn: pago.actualizadoEn, summary };
    });
  }

  async count(olderThanSeconds: number): Promise<number> {
    const [row] = await queryRows<{ n: number }>(this.pool, CONTAR_PENDIENTES_DESDE, [olderThanSeconds]);
    return row!.n;
  }

  ask(pago: Pago): Promise<Charge | undefined> {
    return this.gateway.findCharge(chargeKeyOf(pago.operationId));
  }

  async write(db: Queryable, { item }: PendingOperation<Pago>, version: string, charge: Charge | undefined): Promise<Settlement | undefined> {
    const [row] = await queryRows<PagoRow>(db, CONCILIAR_PAGO, [item.id, estadoOf(charge), charge?.id ?? null, version]);
    if (!row) return undefined;
    const cerrado = toPago(row);
    return { result: resultOf(cerrado.estado), answer: cerrado.estado === 'FALLIDO' ? undefined : storedAnswerOf(cerrado) };
  }

  report(result: ReconcileResult): void {
    this.events.reconciled(result);
  }
}

function estadoOf(charge: Charge | undefined): EstadoPago {
  if (!charge) return 'FALLIDO';
  return charge.outcome === 'approved' ? 'APROBADO' : 'RECHAZADO';
}

const RESULT_OF_ESTADO: Partial<Record<EstadoPago, ReconcileResult>> = { APROBADO: 'approved', RECHAZADO: 'declined', FALLIDO: 'failed' };

function resultOf(estado: EstadoPago): ReconcileResult {
  return RESULT_OF_ESTADO[estado]!;
}
