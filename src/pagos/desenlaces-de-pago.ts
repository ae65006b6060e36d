import { Injectable } from '@nestjs/common';
import type { Transaction } from '../database/query-rows.js';
import { queryRows } from '../database/query-rows.js';
import { Outbox } from '../eventos/outbox.js';
import type { IntentState } from '../gateway/payment-gateway.js';
import { cobroDe } from './cobros.js';
import type { EstadoPago, MotivoRechazo, Pago } from './pago.entity.js';
import { eventoDePago } from './pago-eventos.js';
import { type PagoRow, toPago } from './pago-row.js';
import { DECIDIR_PAGO } from './pagos.sql.js';

type Decidido = { readonly estado: Extract<EstadoPago, 'APROBADO' | 'RECHAZADO'>; readonly motivo: MotivoRechazo | null };

/**
 * Decides a payment whose outcome came after the route answered — by the processor's webhook, or by
 * the reconciler for a payment waiting for its customer — from what the processor says *now* of the
 * payment's intent (never from an event's copy of it: events come late, twice and out of order).
 * Only final outcomes are written; anything still undecided leaves the payment as it is.
 */
@Injectable()
export class DesenlacesDePago {
  constructor(private readonly outbox: Outbox) {}

  /**
   * Writes the outcome `state` settles for `pago` (PENDIENTE or REQUIERE_AUTENTICACION) and its
   * event on `db`, a transaction. Undefined when it settles nothing, or somebody decided first.
   */
  async decidir(db: Transaction, pago: Pago, state: IntentState): Promise<Pago | undefined> {
    const decidido = decisionOf(pago.estado, state);
    if (!decidido) return undefined;
    const [row] = await queryRows<PagoRow>(db, DECIDIR_PAGO, [pago.id, decidido.estado, pago.estado, state.id, decidido.motivo]);
    if (!row) return undefined;
    const decidida = toPago(row);
    this.outbox.record(db, eventoDePago(decidida.clientId, decidida));
    return decidida;
  }
}

/**
 * Charged → APROBADO and declined → RECHAZADO, from either state. Canceled settles only a payment
 * waiting for its customer (the reconciler gave up on the authentication, or the intent was canceled
 * at the processor): RECHAZADO, `autenticacion-abandonada`. A PENDIENTE payment's cancellation, its
 * processing and its confirmable states are the route's and the reconciler's to handle, with its claim.
 */
function decisionOf(estado: EstadoPago, state: IntentState): Decidido | undefined {
  if (estado !== 'PENDIENTE' && estado !== 'REQUIERE_AUTENTICACION') return undefined;
  if (state.status === 'canceled') return estado === 'REQUIERE_AUTENTICACION' ? { estado: 'RECHAZADO', motivo: 'autenticacion-abandonada' } : undefined;
  const cobro = cobroDe(state);
  if (cobro?.estado === 'APROBADO') return { estado: 'APROBADO', motivo: null };
  if (cobro?.estado === 'RECHAZADO') return { estado: 'RECHAZADO', motivo: cobro.motivo };
  return undefined;
}
