import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { SQLSTATE, sqlStateOf, unlessSuperseded } from '../database/postgres-errors.js';
import { pgPoolOf, type Transaction, queryRows } from '../database/query-rows.js';
import { type DeferredCommit, Transactions } from '../database/transactions.js';
import { Outbox } from '../eventos/outbox.js';
import { GatewayIndeterminateError, PAYMENT_GATEWAY, type PaymentGateway, type Refund, RefundRefusedError } from '../gateway/payment-gateway.js';
import type { EstadoPago } from '../pagos/pago.entity.js';
import { PagoNoEncontradoError, ProcesadorSinRespuestaError } from '../pagos/pagos.errors.js';
import type { CrearReembolsoDto } from './dto/crear-reembolso.dto.js';
import { isLive, refundMadeFor, requestRefund } from './processor-refunds.js';
import { Reembolso } from './reembolso.entity.js';
import { eventoDeReembolso } from './reembolso-eventos.js';
import { type ReembolsoRow, toReembolso } from './reembolso-row.js';
import { PagoNoReembolsableError, ReembolsoExcedePagoError, ReembolsoRechazadoError } from './reembolsos.errors.js';
import { ReembolsosEvents } from './reembolsos.events.js';
import {
  ASENTAR_REEMBOLSO_APROBADO, FALLAR_REEMBOLSO, REANUDAR_REEMBOLSO_FALLIDO, REANUDAR_REEMBOLSO_PENDIENTE, REEMBOLSABLE_DE_PAGO, REEMBOLSO_DE_PAGO,
  REEMBOLSO_POR_OPERACION, REEMBOLSOS_DE_PAGO, REGISTRAR_REEMBOLSO_EN_CURSO, RESERVAR_REEMBOLSO,
} from './reembolsos.sql.js';

export interface CrearReembolsoCommand extends CrearReembolsoDto {
  readonly pagoId: string;
  readonly clientId: string;
  /** Stable across retries of one operation; undefined makes every call a new operation. */
  readonly operationId: string | undefined;
}

// Up to this many refunds in a list; a payment has a handful at most.
const LIST_LIMIT = 100;
// A reservation and the read of why it failed can interleave with a refund failing (freeing room); a few rounds settle it.
const MAX_RESERVE_ROUNDS = 3;

@Injectable()
export class ReembolsosService {
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
    private readonly events: ReembolsosEvents,
    private readonly outbox: Outbox,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  /**
   * Refunds (part of) a payment once per operation. Safe to call again for the same operation at any
   * point (after a crash, a takeover, a failed refund): it resumes instead of refunding twice. The
   * refund comes back APROBADO, or PENDIENTE when the processor has not decided yet (its webhook or
   * the reconciler settles it later).
   */
  async crear(command: CrearReembolsoCommand, commit?: DeferredCommit): Promise<Reembolso> {
    const operationId = command.operationId ?? randomUUID();
    const { reembolso, nuevo } = await this.iniciar(command, operationId);
    if (reembolso.estado !== 'PENDIENTE') return reembolso;
    const refund = await this.reembolsar(reembolso, !nuevo);
    // Joins `commit` when given: the idempotency layer stores its answer in this same transaction.
    // Decided by a webhook or the reconciler meanwhile: that decision stands (a joined commit finds out at COMMIT instead: see IdempotencyInterceptor).
    const registrado = await unlessSuperseded(
      this.transactions.runJoinable(async (db) => this.registrar(db, reembolso, refund), commit),
      async () => (await this.porOperacion(reembolso.operationId))!,
    );
    if (registrado.estado === 'APROBADO') this.events.refund('approved');
    if (registrado.estado === 'PENDIENTE') this.events.refund('pending');
    // The processor failed it after accepting it, and its webhook was written first: as a refusal.
    if (registrado.estado === 'FALLIDO') throw new ReembolsoRechazadoError(reembolso.pagoId, `refund ${refund.id} failed`);
    return registrado;
  }

  /** The payment's refunds, or undefined when no payment of this client has that id. */
  async list(clientId: string, pagoId: string): Promise<Reembolso[] | undefined> {
    const rows = await queryRows<ReembolsoRow>(this.pool, REEMBOLSOS_DE_PAGO, [pagoId, clientId, LIST_LIMIT]);
    if (rows.length === 0 && !(await this.pagoDe(clientId, pagoId))) return undefined;
    return rows.map(toReembolso);
  }

  async findOne(clientId: string, pagoId: string, id: string): Promise<Reembolso | undefined> {
    const [row] = await queryRows<ReembolsoRow>(this.pool, REEMBOLSO_DE_PAGO, [id, pagoId, clientId]);
    return row && toReembolso(row);
  }

  /**
   * A new operation reserves at once (one round trip); an operation that started before is found by
   * the reservation's conflict on its id, or, when the reservation matched nothing, before saying why.
   */
  private async iniciar(command: CrearReembolsoCommand, operationId: string): Promise<{ reembolso: Reembolso; nuevo: boolean }> {
    const params = [randomUUID(), command.pagoId, command.clientId, operationId, command.monto, command.motivo ?? null];
    for (let round = 0; round < MAX_RESERVE_ROUNDS; round++) {
      try {
        const [reservado] = await queryRows<ReembolsoRow>(this.pool, RESERVAR_REEMBOLSO, params);
        if (reservado) return { reembolso: toReembolso(reservado), nuevo: true };
      } catch (error) {
        // This operation's refund exists already (a retry, or a takeover racing its predecessor): resume it.
        if (sqlStateOf(error) !== SQLSTATE.uniqueViolation) throw error;
      }
      const existing = await this.porOperacion(operationId);
      if (existing) return { reembolso: await this.reanudar(existing), nuevo: false };
      const refusal = await this.rechazo(command);
      if (refusal) throw refusal;
    }
    throw new ReembolsoExcedePagoError(command.pagoId, command.monto, 0);
  }

  /** Why the reservation matched nothing; undefined when it would fit now (a refund failed meanwhile). */
  private async rechazo(command: CrearReembolsoCommand): Promise<Error | undefined> {
    const pago = await this.pagoDe(command.clientId, command.pagoId);
    if (!pago) return new PagoNoEncontradoError();
    if (pago.estado !== 'APROBADO') {
      this.events.refund('not_refundable');
      return new PagoNoReembolsableError(command.pagoId, pago.estado);
    }
    const reembolsable = Number(pago.reembolsable);
    if (command.monto <= reembolsable) return undefined;
    this.events.refund('exceeds_payment');
    return new ReembolsoExcedePagoError(command.pagoId, command.monto, reembolsable);
  }

  /** A resumed operation: PENDIENTE renews its version, FALLIDO runs again (reserving its amount anew), APROBADO is the answer. */
  private async reanudar(reembolso: Reembolso): Promise<Reembolso> {
    const statement = reembolso.estado === 'PENDIENTE' ? REANUDAR_REEMBOLSO_PENDIENTE : reembolso.estado === 'FALLIDO' ? REANUDAR_REEMBOLSO_FALLIDO : undefined;
    if (!statement) return reembolso;
    try {
      const [reanudado] = await queryRows<ReembolsoRow>(this.pool, statement, [reembolso.operationId]);
      return reanudado ? toReembolso(reanudado) : (await this.porOperacion(reembolso.operationId))!;
    } catch (error) {
      if (sqlStateOf(error) !== SQLSTATE.checkViolation) throw error;
      // Other refunds took what this one had given back when it failed.
      const pago = await this.pagoDe(reembolso.clientId, reembolso.pagoId);
      this.events.refund('exceeds_payment');
      throw new ReembolsoExcedePagoError(reembolso.pagoId, reembolso.monto, Number(pago?.reembolsable ?? 0));
    }
  }

  /**
   * Refunds once, with only what the processor offers: a resumed operation first looks for its refund
   * among the intent's refunds (a previous attempt may have made it); a lost answer is resent under
   * the same key. A 5xx is indeterminate (Stripe's rule: the processor keeps it under the key, and it
   * may have refunded): settled by that same look, and when nothing is found the refund stays
   * PENDIENTE under the same key (503; the retry resends it). Only the reconciler, after the lock
   * timeout, takes "not found" for "never made". A refund answered `failed` or `canceled` at once
   * refunded nothing: as a refusal. Returns a live refund (pending or succeeded).
   */
  private async reembolsar(reembolso: Reembolso, resumed: boolean): Promise<Refund> {
    const previous = resumed ? await this.ask(() => refundMadeFor(this.gateway, reembolso)) : undefined;
    if (previous) return previous;
    let refund: Refund;
    try {
      refund = await requestRefund(this.gateway, reembolso);
    } catch (error) {
      if (error instanceof RefundRefusedError) return this.fallar(reembolso, new ReembolsoRechazadoError(reembolso.pagoId, error.message));
      // No answer, or one still being worked on: it may yet refund; the retry or the reconciler looks first.
      if (!(error instanceof GatewayIndeterminateError && error.replaysFailure)) throw this.unknownOutcome(error);
      const made = await this.ask(() => refundMadeFor(this.gateway, reembolso));
      if (made) return made;
      throw new ProcesadorSinRespuestaError('refund');
    }
    if (isLive(refund)) return refund;
    return this.fallar(reembolso, new ReembolsoRechazadoError(reembolso.pagoId, `the refund is ${refund.status}`));
  }

  /**
   * What the processor said, queued on `db` without waiting: succeeded → APROBADO with its event,
   * pending → PENDIENTE with the processor's refund id. With the key's completion and COMMIT behind
   * them, one round trip; when a webhook or the reconciler decided first, the statement raises and it all rolls back.
   */
  private registrar(db: Transaction, reembolso: Reembolso, refund: Refund): Reembolso {
    if (refund.status === 'pending') {
      db.send(REGISTRAR_REEMBOLSO_EN_CURSO, [reembolso.id, refund.id]);
      return Object.assign(new Reembolso(), reembolso, { gatewayRefundId: refund.id });
    }
    const aprobado = Object.assign(new Reembolso(), reembolso, { estado: 'APROBADO', gatewayRefundId: refund.id });
    db.send(ASENTAR_REEMBOLSO_APROBADO, [reembolso.id, refund.id]);
    this.outbox.record(db, eventoDeReembolso(aprobado));
    return aprobado;
  }

  /** The processor refunded nothing: the amount goes back to the payment, and the answer is `problem`. */
  private async fallar(reembolso: Reembolso, problem: Error): Promise<never> {
    await this.transactions.run((db) => this.cerrar(db, reembolso, FALLAR_REEMBOLSO, [reembolso.id]));
    this.events.refund('failed');
    throw problem;
  }

  /** A processor call whose unknown outcome leaves the refund PENDIENTE and answers 503. */
  private async ask<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.unknownOutcome(error);
    }
  }

  private unknownOutcome(error: unknown): unknown {
    return error instanceof GatewayIndeterminateError ? new ProcesadorSinRespuestaError('refund') : error;
  }

  /** The refund failed, and its event, unless another attempt, a webhook or the reconciler settled it first (its state stands). */
  private async cerrar(db: Transaction, reembolso: Reembolso, statement: string, params: unknown[]): Promise<Reembolso> {
    const [row] = await queryRows<ReembolsoRow>(db, statement, params);
    if (!row) return (await this.porOperacion(reembolso.operationId))!;
    const cerrado = toReembolso(row);
    this.outbox.record(db, eventoDeReembolso(cerrado));
    return cerrado;
  }

  private async porOperacion(operationId: string): Promise<Reembolso | undefined> {
    const [row] = await queryRows<ReembolsoRow>(this.pool, REEMBOLSO_POR_OPERACION, [operationId]);
    return row && toReembolso(row);
  }

  private async pagoDe(clientId: string, pagoId: string): Promise<{ estado: EstadoPago; reembolsable: string } | undefined> {
    const [pago] = await queryRows<{ estado: EstadoPago; reembolsable: string }>(this.pool, REEMBOLSABLE_DE_PAGO, [pagoId, clientId]);
    return pago;
  }
}
