import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import type pg from 'pg';
import { DataSource, Repository } from 'typeorm';
import type { AppConfigService } from '../config/app-config.js';
import { SQLSTATE, sqlStateOf, unlessSuperseded } from '../database/postgres-errors.js';
import { pgPoolOf, type Transaction, queryRows } from '../database/query-rows.js';
import { type DeferredCommit, Transactions } from '../database/transactions.js';
import { Outbox } from '../eventos/outbox.js';
import { type Cobro, Cobros, PagoAsentadoError, type PagoEnCurso } from './cobros.js';
import type { CrearPagoDto } from './dto/crear-pago.dto.js';
import { ESTADOS_EN_CURSO, Pago } from './pago.entity.js';
import { MARCAR_PAGO_ESPERADO } from './esperas.sql.js';
import { eventoDePago } from './pago-eventos.js';
import { type PagoRow, type PagoVisible, toPago } from './pago-row.js';
import { rechazoDe } from './pago-answers.js';
import { OrdenConPagoEnCursoError, OrdenYaPagadaError, PasarelaNoDisponibleError } from './pagos.errors.js';
import {
  ASENTAR_PAGO, FALLAR_PAGO, INICIAR_PAGO, PAGO_ACTIVO_DE_ORDEN, PAGO_POR_OPERACION, PAGOS_DE_CLIENTE, PAGOS_DE_CLIENTE_DESDE, POSICION_DE_PAGO,
} from './pagos.sql.js';

export interface CrearPagoCommand extends CrearPagoDto {
  readonly clientId: string;
  /** Stable across retries of one operation; undefined makes every call a new operation. */
  readonly operationId: string | undefined;
}

/** One page of `GET /pagos`: after the payment `desde` when given, at most `limit`, only order `numeroOrden` when given. */
export interface PaginaDePagos {
  readonly numeroOrden: string | undefined;
  readonly desde: string | undefined;
  readonly limit: number;
}

type Inicio = { readonly enCurso: PagoEnCurso } | { readonly asentado: Pago };

@Injectable()
export class PagosService {
  private readonly pool: pg.Pool;
  private readonly autenticacionTimeoutSeconds: number;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
    @InjectRepository(Pago) private readonly pagos: Repository<Pago>,
    private readonly cobros: Cobros,
    private readonly outbox: Outbox,
    @Inject(ConfigService) config: AppConfigService,
  ) {
    this.pool = pgPoolOf(dataSource);
    this.autenticacionTimeoutSeconds = config.get('pagos', { infer: true }).autenticacionTimeoutSeconds;
  }

  /**
   * Charges an order once per operation. Safe to call again for the same operation at any point
   * (after a crash, a takeover, a failed charge): it resumes instead of charging twice. The final
   * state joins `commit` when given (the idempotency layer stores its answer in that transaction).
   * A payment that needs the customer's authentication comes back REQUIERE_AUTENTICACION (a 202):
   * its outcome arrives later, by the processor's webhook or the reconciler.
   */
  async crear(command: CrearPagoCommand, commit?: DeferredCommit): Promise<PagoVisible> {
    const operationId = command.operationId ?? randomUUID();
    const inicio = await this.iniciar(command, operationId, commit);
    if ('asentado' in inicio) return this.resultado(inicio.asentado);
    const pago = inicio.enCurso;
    const cobro = await this.cobros.cobrar(pago, command.token).catch(async (error: unknown) => {
      if (!(error instanceof PagoAsentadoError)) throw error;
      return undefined;
    });
    // Settled by another attempt: its outcome is the answer (and a stalled owner's completion fails its fence: 409).
    if (!cobro) return this.resultado(await this.porOperacion(operationId));
    if (cobro.estado === 'FALLIDO') return this.fallar(command.clientId, pago);
    // Settled by a webhook or another attempt meanwhile: that outcome stands (a joined commit finds out at COMMIT instead: see IdempotencyInterceptor).
    const cerrado = await unlessSuperseded<PagoVisible>(
      this.transactions.runJoinable(async (db) => this.cerrar(db, command.clientId, pago, cobro), commit),
      () => this.porOperacion(operationId),
    );
    return this.resultado(cerrado, cobro.estado === 'RECHAZADO' ? cobro.razon : undefined);
  }

  findOne(clientId: string, id: string): Promise<Pago | null> {
    return this.pagos.findOneBy({ id, clientId });
  }

  /**
   * Marks an in-course payment waited on, so that its next change of `estado` is notified, and returns
   * it; undefined when there was nothing to mark (MARCAR_PAGO_ESPERADO says what to read then).
   */
  async marcarEsperado(clientId: string, id: string): Promise<Pago | undefined> {
    const [marcado] = await queryRows<PagoRow>(this.pool, MARCAR_PAGO_ESPERADO, [id, clientId, ESTADOS_EN_CURSO]);
    return marcado && toPago(marcado);
  }

  /** The client's payments, oldest first (see PAGOS_DE_CLIENTE); undefined when `desde` is not one of theirs. */
  async list(clientId: string, pagina: PaginaDePagos): Promise<Pago[] | undefined> {
    const { numeroOrden = null, desde, limit } = pagina;
    if (desde === undefined) return (await queryRows<PagoRow>(this.pool, PAGOS_DE_CLIENTE, [clientId, limit, numeroOrden])).map(toPago);
    const [posicion] = await queryRows<{ creadoEn: string; id: string }>(this.pool, POSICION_DE_PAGO, [desde, clientId]);
    if (!posicion) return undefined;
    const rows = await queryRows<PagoRow>(this.pool, PAGOS_DE_CLIENTE_DESDE, [clientId, limit, numeroOrden, posicion.creadoEn, posicion.id]);
    return rows.map(toPago);
  }

  /**
   * Starts the payment, or finds where the operation stands. The first write of the route (see
   * `claimWithFirstWrite` on PagosController): it commits at once, with the key's claim when `commit`
   * carries one, and nothing is done before it.
   */
  private async iniciar(command: CrearPagoCommand, operationId: string, commit: DeferredCommit | undefined): Promise<Inicio> {
    const params = [randomUUID(), command.clientId, operationId, command.numeroOrden, command.monto, command.moneda];
    try {
      const [started] = await this.transactions.runFirst(
        (db) => queryRows<{ id: string; monto: string; moneda: string; nuevo: boolean; creadoEn: Date }>(db, INICIAR_PAGO, params),
        commit,
      );
      if (started?.nuevo) {
        const { id, moneda, creadoEn } = started;
        return { enCurso: { id, operationId, numeroOrden: command.numeroOrden, creadoEn, monto: Number(started.monto), moneda, intentId: null, intento: 1 } };
      }
      if (started) return { enCurso: await this.reanudado(operationId) };
    } catch (error) {
      if (sqlStateOf(error) !== SQLSTATE.uniqueViolation) throw error;
      throw await this.conflictoDeOrden(command);
    }
    return { asentado: await this.porOperacion(operationId) };
  }

  private async conflictoDeOrden(command: CrearPagoCommand): Promise<Error> {
    const [activo] = await queryRows<PagoRow>(this.pool, PAGO_ACTIVO_DE_ORDEN, [command.clientId, command.numeroOrden]);
    // The holder settled between our insert and this read: the client may simply retry.
    if (!activo) return new OrdenConPagoEnCursoError(command.numeroOrden, 'unknown');
    return activo.estado === 'APROBADO'
      ? new OrdenYaPagadaError(command.numeroOrden, activo.id)
      : new OrdenConPagoEnCursoError(command.numeroOrden, activo.id);
  }

  private async porOperacion(operationId: string): Promise<Pago> {
    const [row] = await queryRows<PagoRow>(this.pool, PAGO_POR_OPERACION, [operationId]);
    return toPago(row!);
  }

  /** A resumed operation: where a previous attempt left its intent (rare, so read apart from the hot insert). */
  private async reanudado(operationId: string): Promise<PagoEnCurso> {
    const pago = await this.porOperacion(operationId);
    const { id, numeroOrden, creadoEn, monto, moneda } = pago;
    return { id, operationId, numeroOrden, creadoEn, monto, moneda, intentId: pago.gatewayChargeId, intento: pago.intentoProcesador };
  }

  /**
   * The processor failed without charging: the order is free again, and the client may retry with
   * the same key. The state and its `pago.fallido` event commit together.
   */
  private async fallar(clientId: string, pago: PagoEnCurso): Promise<never> {
    await this.transactions.run(async (db) => {
      const [fallido] = await queryRows<PagoRow>(db, FALLAR_PAGO, [pago.id]);
      if (fallido) this.outbox.record(db, eventoDePago(clientId, toPago(fallido)));
    });
    throw new PasarelaNoDisponibleError();
  }

  /**
   * The payment as the processor's answer settles it, its settlement and its event queued on `db`
   * without waiting: with the key's completion and COMMIT behind them, one round trip. Should a
   * webhook or another attempt have settled it meanwhile, ASENTAR_PAGO raises and it all rolls back.
   */
  private cerrar(db: Transaction, clientId: string, pago: PagoEnCurso, cobro: Exclude<Cobro, { estado: 'FALLIDO' }>): PagoVisible {
    const asentado = this.asentado(pago, cobro);
    const { estado, motivo, clientSecret = null, autenticacionExpiraEn = null } = asentado;
    db.send(ASENTAR_PAGO, [pago.id, estado, cobro.intentId, motivo, clientSecret, autenticacionExpiraEn]);
    this.outbox.record(db, eventoDePago(clientId, asentado));
    return asentado;
  }

  /** What a PENDIENTE payment becomes with the processor's answer: nothing refunded yet, no motivo but a decline's. */
  private asentado(pago: PagoEnCurso, cobro: Exclude<Cobro, { estado: 'FALLIDO' }>): PagoVisible {
    const { id, numeroOrden, monto, moneda, creadoEn } = pago;
    const visible = { id, numeroOrden, monto, moneda, creadoEn, montoReembolsado: 0, estado: cobro.estado, motivo: cobro.estado === 'RECHAZADO' ? cobro.motivo : null };
    if (cobro.estado !== 'REQUIERE_AUTENTICACION') return visible;
    return { ...visible, clientSecret: cobro.clientSecret, autenticacionExpiraEn: new Date(Date.now() + this.autenticacionTimeoutSeconds * 1000) };
  }

  /** A payment as the API answers it: approved or waiting for the customer is a value, declined a problem carrying it. */
  private resultado(pago: PagoVisible, razon?: string): PagoVisible {
    if (pago.estado === 'RECHAZADO') throw rechazoDe(pago, razon);
    return pago;
  }
}
