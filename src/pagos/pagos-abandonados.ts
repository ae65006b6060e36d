import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import type { AppConfigService } from '../config/app-config.js';
import { pgPoolOf, type Transaction, queryRows } from '../database/query-rows.js';
import { Outbox } from '../eventos/outbox.js';
import { type IntentStatus, PAYMENT_GATEWAY, type PaymentGateway } from '../gateway/payment-gateway.js';
import { type AbandonedOperationKind, type PendingOperation, type Settlement, UNDECIDED } from './abandoned-operations.js';
import { type Cobro, cobroDe } from './cobros.js';
import { type EstadoPago, type Pago, processorKeyOf } from './pago.entity.js';
import { storedAnswerOf } from './pago-answers.js';
import { eventoDePago } from './pago-eventos.js';
import { type PagoRow, toPago } from './pago-row.js';
import { PagosEvents, type ReconcileResult } from './pagos.events.js';
import { CONCILIAR_PAGO, CONTAR_PENDIENTES_DESDE, PAGOS_PENDIENTES_DESDE } from './pagos.sql.js';

/** The reconciler's verdict on an abandoned payment: what the processor did, or FALLIDO when it charged nothing and never will. */
export type Desenlace = Exclude<Cobro, { estado: 'FALLIDO' }> | { readonly estado: 'FALLIDO'; readonly intentId: string | null };

// Nothing charged and nobody left to confirm it (the reconciler has no payment method): canceled.
const CANCELABLE: ReadonlySet<IntentStatus> = new Set(['confirmable', 'failed']);

/**
 * Payments as the reconciler settles them, from their intent retrieved by id: succeeded → APROBADO
 * and declined → RECHAZADO, with the route's answer; requires_action → REQUIERE_AUTENTICACION with
 * the route's 202 (the customer's app gets it on its retry); an intent still waiting for a
 * confirmation is canceled → FALLIDO (nothing charged, the order free, the key released); no intent
 * recorded → it was never confirmed → FALLIDO; still processing → left for the next pass.
 */
@Injectable()
export class PagosAbandonados implements AbandonedOperationKind<Pago, Desenlace> {
  readonly tabla = 'pagos';

  private readonly pool: pg.Pool;
  private readonly autenticacionTimeoutSeconds: number;

  constructor(
    dataSource: DataSource,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
    private readonly events: PagosEvents,
    private readonly outbox: Outbox,
    @Inject(ConfigService) config: AppConfigService,
  ) {
    this.pool = pgPoolOf(dataSource);
    this.autenticacionTimeoutSeconds = config.get('pagos', { infer: true }).autenticacionTimeoutSeconds;
  }

  async stale(olderThanSeconds: number, after: string, limit: number): Promise<Array<PendingOperation<Pago>>> {
    const rows = await queryRows<PagoRow & { version: string }>(this.pool, PAGOS_PENDIENTES_DESDE, [olderThanSeconds, after, limit]);
    return rows.map(({ version, ...row }) => this.pendingOf(toPago(row), version));
  }

  /** The payment as an operator's list and the log show it. */
  pendingOf(pago: Pago, version = pago.actualizadoEn.toISOString()): PendingOperation<Pago> {
    const summary = `pago ${pago.id}  client ${pago.clientId}  order ${pago.numeroOrden}  ${pago.monto} ${pago.moneda}`;
    return { item: pago, id: pago.id, operationId: pago.operationId, version, actualizadoEn: pago.actualizadoEn, summary };
  }

  async count(olderThanSeconds: number): Promise<number> {
    const [row] = await queryRows<{ n: number }>(this.pool, CONTAR_PENDIENTES_DESDE, [olderThanSeconds]);
    return row!.n;
  }

  async ask(pago: Pago): Promise<Desenlace | typeof UNDECIDED> {
    const intentId = pago.gatewayChargeId;
    // Recorded before any confirmation: without it, nothing was ever confirmed.
    if (!intentId) return { estado: 'FALLIDO', intentId: null };
    let state = await this.gateway.retrieveIntent(intentId);
    // A cancel that loses to a confirmation still in flight answers what that confirmation did.
    if (CANCELABLE.has(state.status)) state = await this.gateway.cancelIntent(intentId, processorKeyOf(pago.operationId, pago.intentoProcesador, 'cancel'));
    if (state.status === 'canceled') return { estado: 'FALLIDO', intentId: state.id };
    return cobroDe(state) ?? UNDECIDED;
  }

  async write(db: Transaction, { item }: PendingOperation<Pago>, version: string, desenlace: Desenlace): Promise<Settlement | undefined> {
    const motivo = desenlace.estado === 'RECHAZADO' ? desenlace.motivo : null;
    const clientSecret = desenlace.estado === 'REQUIERE_AUTENTICACION' ? desenlace.clientSecret : null;
    const [row] = await queryRows<PagoRow>(db, CONCILIAR_PAGO, [
      item.id, desenlace.estado, desenlace.intentId, version, motivo, clientSecret, this.autenticacionTimeoutSeconds,
    ]);
    if (!row) return undefined;
    const cerrado = toPago(row);
    this.outbox.record(db, eventoDePago(cerrado.clientId, cerrado));
    return { result: resultOf(cerrado.estado), answer: cerrado.estado === 'FALLIDO' ? undefined : storedAnswerOf(cerrado) };
  }

  report(result: ReconcileResult): void {
    this.events.reconciled(result);
  }
}

const RESULT_OF_ESTADO: Partial<Record<EstadoPago, ReconcileResult>> = {
  APROBADO: 'approved',
  RECHAZADO: 'declined',
  FALLIDO: 'failed',
  REQUIERE_AUTENTICACION: 'awaiting_authentication',
};

function resultOf(estado: EstadoPago): ReconcileResult {
  return RESULT_OF_ESTADO[estado]!;
}
