import { Injectable } from '@nestjs/common';
import { type Transaction, queryRows } from '../database/query-rows.js';
import { Outbox } from '../eventos/outbox.js';
import type { Refund } from '../gateway/payment-gateway.js';
import type { Reembolso } from './reembolso.entity.js';
import { eventoDeReembolso } from './reembolso-eventos.js';
import { type ReembolsoRow, toReembolso } from './reembolso-row.js';
import { APROBAR_REEMBOLSO } from './reembolsos.sql.js';
import { BLOQUEAR_REEMBOLSO, FALLAR_REEMBOLSO_EN_PROCESADOR } from './reembolsos-procesador.sql.js';

/**
 * A refund's state from what the processor says of it now (retrieved, never an event's copy):
 * succeeded → APROBADO (`reembolso.aprobado`); failed or canceled → FALLIDO with the amount back on
 * the payment (`reembolso.fallido`), from PENDIENTE or from APROBADO; pending → nothing yet. Each
 * statement is conditional, so of any number of deciders of one refund (the events of one change,
 * their redeliveries, the reconciler, the route) one writes and one event is recorded.
 */
@Injectable()
export class DesenlacesDeReembolso {
  constructor(private readonly outbox: Outbox) {}

  /** Writes on `db`, which must be a transaction (a failure holds the refund's row lock to its end); the refund as decided, or undefined. */
  async decidir(db: Transaction, reembolso: Reembolso, refund: Refund): Promise<Reembolso | undefined> {
    if (refund.status === 'pending') return undefined;
    const statement = refund.status === 'succeeded' ? APROBAR_REEMBOLSO : FALLAR_REEMBOLSO_EN_PROCESADOR;
    if (statement === FALLAR_REEMBOLSO_EN_PROCESADOR) await queryRows(db, BLOQUEAR_REEMBOLSO, [reembolso.id]);
    const [row] = await queryRows<ReembolsoRow>(db, statement, [reembolso.id, refund.id]);
    if (!row) return undefined;
    const decidido = toReembolso(row);
    this.outbox.record(db, eventoDeReembolso(decidido));
    return decidido;
  }
}
