import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource, Repository } from 'typeorm';
import { SQLSTATE, sqlStateOf } from '../database/postgres-errors.js';
import { pgPoolOf, type Queryable, queryRows } from '../database/query-rows.js';
import { type DeferredCommit, Transactions } from '../database/transactions.js';
import { type Charge, GatewayUnavailableError, PAYMENT_GATEWAY, type PaymentGateway } from '../gateway/payment-gateway.js';
import type { CrearPagoDto } from './dto/crear-pago.dto.js';
import { toPagoResponse } from './dto/pago.response.js';
import { chargeKeyOf, type EstadoPago, Pago } from './pago.entity.js';
import { type PagoRow, type PagoVisible, type PagoVisibleRow, toPago, toPagoVisible } from './pago-row.js';
import { OrdenConPagoEnCursoError, OrdenYaPagadaError, PagoRechazadoError, PasarelaNoDisponibleError } from './pagos.errors.js';
import { CERRAR_PAGO, INICIAR_PAGO, PAGO_ACTIVO_DE_ORDEN, PAGO_POR_OPERACION } from './pagos.sql.js';

export interface CrearPagoCommand extends CrearPagoDto {
  readonly clientId: string;
  /** Stable across retries of one operation; undefined makes every call a new operation. */
  readonly operationId: string | undefined;
}

// Up to this many payments in a list; an order has a handful at most.
const LIST_LIMIT = 100;

/** A payment about to be charged, as INICIAR_PAGO returns it; `nuevo` unless it resumes an operation. */
interface PagoEnCurso {
  readonly id: string;
  readonly operationId: string;
  readonly monto: number;
  readonly moneda: string;
  readonly nuevo: boolean;
}

type Inicio = { readonly enCurso: PagoEnCurso } | { readonly asentado: Pago };

@Injectable()
export class PagosService {
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    @InjectRepository(Pago) private readonly pagos: Repository<Pago>,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  /**
   * Charges an order once per operation. Safe to call again for the same operation at any point
   * (after a crash, a takeover, a failed charge): it resumes instead of charging twice. The final
   * state joins `commit` when given (the idempotency layer stores its answer in that transaction).
   */
  async crear(command: CrearPagoCommand, commit?: DeferredCommit): Promise<PagoVisible> {
    const operationId = command.operationId ?? randomUUID();
    const inicio = await this.iniciar(command, operationId);
    if ('asentado' in inicio) return this.resultado(inicio.asentado);
    const pago = inicio.enCurso;
    const charge = await this.cobrar(pago, command.token);
    const estado: EstadoPago = charge.outcome === 'approved' ? 'APROBADO' : 'RECHAZADO';
    const cerrado = await this.transactions.runJoinable((db) => this.cerrar(db, pago, estado, charge.id), commit);
    return this.resultado(cerrado);
  }

  findOne(clientId: string, id: string): Promise<Pago | null> {
    return this.pagos.findOneBy({ id, clientId });
  }

  list(clientId: string, numeroOrden: string | undefined): Promise<Pago[]> {
    return this.pagos.find({ where: { clientId, ...(numeroOrden && { numeroOrden }) }, order: { creadoEn: 'ASC' }, take: LIST_LIMIT });
  }

  private async iniciar(command: CrearPagoCommand, operationId: string): Promise<Inicio> {
    const params = [randomUUID(), command.clientId, operationId, command.numeroOrden, command.monto, command.moneda];
    try {
      const [started] = await queryRows<{ id: string; monto: string; moneda: string; nuevo: boolean }>(this.pool, INICIAR_PAGO, params);
      if (started) return { enCurso: { ...started, operationId, monto: Number(started.monto) } };
    } catch (error) {
      if (sqlStateOf(error) !== SQLSTATE.uniqueViolation) throw error;
      throw await this.conflictoDeOrden(command);
    }
    const [existing] = await queryRows<PagoRow>(this.pool, PAGO_POR_OPERACION, [operationId]);
    return { asentado: toPago(existing!) };
  }

  private async conflictoDeOrden(command: CrearPagoCommand): Promise<Error> {
    const [activo] = await queryRows<PagoRow>(this.pool, PAGO_ACTIVO_DE_ORDEN, [command.clientId, command.numeroOrden]);
    // The holder settled between our insert and this read: the client may simply retry.
    if (!activo) return new OrdenConPagoEnCursoError(command.numeroOrden, 'unknown');
    return activo.estado === 'APROBADO'
      ? new OrdenYaPagadaError(command.numeroOrden, activo.id)
      : new OrdenConPagoEnCursoError(command.numeroOrden, activo.id);
  }

  /** A resumed operation may have charged already: the gateway is asked before charging again. */
  private async cobrar(pago: PagoEnCurso, paymentToken: string): Promise<Charge> {
    const chargeKey = chargeKeyOf(pago.operationId);
    const previous = pago.nuevo ? undefined : await this.gateway.findCharge(chargeKey);
    if (previous) return previous;
    try {
      return await this.gateway.charge({ chargeKey, amount: pago.monto, currency: pago.moneda, paymentToken });
    } catch (error) {
      if (!(error instanceof GatewayUnavailableError)) throw error;
      // Nothing was charged: free the order so that it can be paid, and let the client retry.
      await this.transactions.run((db) => this.cerrar(db, pago, 'FALLIDO', null));
      throw new PasarelaNoDisponibleError();
    }
  }

  private async cerrar(db: Queryable, pago: PagoEnCurso, estado: EstadoPago, chargeId: string | null): Promise<PagoVisible> {
    const [cerrado] = await queryRows<PagoVisibleRow>(db, CERRAR_PAGO, [pago.id, estado, chargeId]);
    if (cerrado) return toPagoVisible(cerrado);
    const [actual] = await queryRows<PagoRow>(db, PAGO_POR_OPERACION, [pago.operationId]);
    return toPago(actual!);
  }

  /** A settled payment as the API answers it: approved is a value, declined a 402 carrying it. */
  private resultado(pago: PagoVisible): PagoVisible {
    if (pago.estado === 'RECHAZADO') throw new PagoRechazadoError(toPagoResponse(pago));
    return pago;
  }
}
