import { Inject, Injectable, Logger } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import { Transactions } from '../database/transactions.js';
import { type IntentState, isProcessorUnreachable, PAYMENT_GATEWAY, type PaymentGateway } from '../gateway/payment-gateway.js';
import { DesenlacesDePago } from './desenlaces-de-pago.js';
import { type Pago, processorKeyOf } from './pago.entity.js';
import { type PagoRow, toPago } from './pago-row.js';
import type { ReconcileResult } from './pagos.events.js';
import { PAGOS_ESPERANDO_AUTENTICACION } from './pagos.sql.js';

/** A payment waiting for its customer, as the reconciler found it, and what became of it. */
export interface AutenticacionRevisada {
  readonly pago: Pago;
  readonly result: ReconcileResult;
}

const BATCH_SIZE = 100;
const MAX_BATCHES_PER_PASS = 10;
const BEFORE_ANY_ID = '00000000-0000-0000-0000-000000000000';

/**
 * The reconciler's share of payments waiting for their customer (REQUIERE_AUTENTICACION): the
 * fallback for webhooks that are late or off. Each intent is retrieved; a finished authentication
 * settles the payment; one past `autenticacion_expira_en` is canceled under the attempt's derived
 * cancel key, and the payment declined (`autenticacion-abandonada`) — unless the cancel loses to a
 * completed authentication, and then what the processor did stands. No claim is involved: the key
 * was completed with the 202 already.
 */
@Injectable()
export class AutenticacionesPendientes {
  private readonly logger = new Logger(AutenticacionesPendientes.name);
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly desenlaces: DesenlacesDePago,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  /** One pass over the payments untouched for `olderThanSeconds`; stops early when the processor can't be reached. */
  async reconcileOnce(olderThanSeconds: number): Promise<AutenticacionRevisada[]> {
    const done: AutenticacionRevisada[] = [];
    let after = BEFORE_ANY_ID;
    for (let batch = 0; batch < MAX_BATCHES_PER_PASS; batch++) {
      const rows = await queryRows<PagoRow & { expirado: boolean }>(this.pool, PAGOS_ESPERANDO_AUTENTICACION, [olderThanSeconds, after, BATCH_SIZE]);
      for (const { expirado, ...row } of rows) {
        const pago = toPago(row);
        const result = await this.revisar(pago, expirado);
        if (result) done.push({ pago, result });
        if (result === 'unreachable') return done;
      }
      if (rows.length < BATCH_SIZE) break;
      after = rows.at(-1)!.id;
    }
    return done;
  }

  /** Undefined: still waiting, or somebody (a webhook) decided it first. */
  private async revisar(pago: Pago, expirado: boolean): Promise<ReconcileResult | undefined> {
    let state: IntentState;
    try {
      state = await this.currentState(pago, expirado);
    } catch (error) {
      const unreachable = isProcessorUnreachable(error);
      this.logger.warn(`pago ${pago.id} waiting for authentication: ${unreachable ? 'the processor could not be asked' : 'skipped'} (${(error as Error).message})`);
      return unreachable ? 'unreachable' : 'skipped';
    }
    const decidida = await this.transactions.run((db) => this.desenlaces.decidir(db, pago, state));
    if (!decidida) return undefined;
    this.logger.log(`pago ${pago.id} reconciled: ${decidida.estado}${decidida.motivo ? ` (${decidida.motivo})` : ''} after waiting for authentication`);
    if (decidida.motivo === 'autenticacion-abandonada') return 'authentication_abandoned';
    return decidida.estado === 'APROBADO' ? 'approved' : 'declined';
  }

  /** The intent now; past its time and still waiting for the customer, canceled first (a cancel that loses answers what won). */
  private async currentState(pago: Pago, expirado: boolean): Promise<IntentState> {
    const intentId = pago.gatewayChargeId!;
    const state = await this.gateway.retrieveIntent(intentId);
    if (!expirado || state.status !== 'requires_action') return state;
    return this.gateway.cancelIntent(intentId, processorKeyOf(pago.operationId, pago.intentoProcesador, 'cancel'));
  }
}
