import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { pgPoolOf, queryRows } from '../database/query-rows.js';
import {
  AmountRefusedError, type DeclineReason, GatewayIndeterminateError, type IntentState, PAYMENT_GATEWAY, type PaymentGateway,
} from '../gateway/payment-gateway.js';
import { type MotivoRechazo, type PasoProcesador, processorKeyOf } from './pago.entity.js';
import { ProcesadorSinRespuestaError } from './pagos.errors.js';
import { ESTADO_DE_PAGO, REGISTRAR_INTENT, SIGUIENTE_INTENTO } from './pagos.sql.js';

/** A PENDIENTE payment about to be charged: what INICIAR_PAGO returns, and its intent when it resumes. */
export interface PagoEnCurso {
  readonly id: string;
  readonly operationId: string;
  readonly numeroOrden: string;
  readonly creadoEn: Date;
  readonly monto: number;
  readonly moneda: string;
  /** The processor's intent a previous attempt recorded; null until one is. */
  readonly intentId: string | null;
  readonly intento: number;
}

/**
 * Another attempt of the operation settled the payment while this one worked (this one stalled past a
 * takeover, or the reconciler gave up on it): the payment is read again, and this attempt charges nothing.
 */
export class PagoAsentadoError extends Error {
  override readonly name = 'PagoAsentadoError';
}

/**
 * What the processor did: charged, declined (`intentId` null when it refused even to create one: the
 * amount, and `razon` says why), failed without charging (a processing error), or asks the customer
 * to authenticate first.
 */
export type Cobro =
  | { readonly estado: 'APROBADO'; readonly intentId: string }
  | { readonly estado: 'RECHAZADO'; readonly intentId: string | null; readonly motivo: MotivoRechazo; readonly razon?: string }
  | { readonly estado: 'FALLIDO'; readonly intentId: string }
  | { readonly estado: 'REQUIERE_AUTENTICACION'; readonly intentId: string; readonly clientSecret: string };

const MOTIVO_DE_RECHAZO: Record<DeclineReason, MotivoRechazo> = { card: 'tarjeta', authentication: 'autenticacion', spent_token: 'token-usado' };

/**
 * The payment's outcome that an intent's state settles, whoever asks (the route, the reconciler, a
 * webhook); undefined while nothing is charged or refused and it may still be confirmed, is still
 * processing, or was canceled.
 */
export function cobroDe(state: IntentState): Cobro | undefined {
  switch (state.status) {
    case 'succeeded':
      return { estado: 'APROBADO', intentId: state.id };
    case 'declined':
      return { estado: 'RECHAZADO', intentId: state.id, motivo: MOTIVO_DE_RECHAZO[state.declinedFor ?? 'card'] };
    case 'requires_action':
      if (!state.clientSecret) throw new Error(`intent ${state.id} requires action but came without its client secret`);
      return { estado: 'REQUIERE_AUTENTICACION', intentId: state.id, clientSecret: state.clientSecret };
    default:
      return undefined;
  }
}

/**
 * Charges a payment through a processor intent, once, with only what the processor offers: the
 * intent is created with our parameters alone and its id recorded before it is confirmed; a resumed
 * attempt retrieves it by that id and goes on from what it says. Whatever the processor leaves
 * unknown is a {@link ProcesadorSinRespuestaError}: the payment stays PENDIENTE for the retry or the
 * reconciler, which ask before they act.
 */
@Injectable()
export class Cobros {
  private readonly pool: pg.Pool;

  constructor(
    dataSource: DataSource,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async cobrar(pago: PagoEnCurso, paymentToken: string): Promise<Cobro> {
    let enCurso = pago;
    if (enCurso.intentId) {
      const state = await this.ask(() => this.gateway.retrieveIntent(enCurso.intentId!));
      const cobro = this.settledBy(state);
      if (cobro) return cobro;
      // Canceled (the reconciler gave up on it): nothing was charged; this attempt starts a new intent.
      if (state.status === 'canceled') enCurso = await this.nextAttempt(enCurso, false);
    }
    let intentId = enCurso.intentId;
    try {
      intentId ??= await this.createIntent(enCurso);
    } catch (error) {
      if (!(error instanceof AmountRefusedError)) throw error;
      return { estado: 'RECHAZADO', intentId: null, motivo: 'importe-no-admitido', razon: error.message };
    }
    return this.confirm({ ...enCurso, intentId }, paymentToken);
  }

  private async createIntent(pago: PagoEnCurso): Promise<string> {
    const metadata = { pago_id: pago.id, operation_id: pago.operationId };
    const state = await this.ask(
      () => this.gateway.createIntent({ key: keyOf(pago, 'create'), amount: pago.monto, currency: pago.moneda, metadata }),
      // An intent with no payment method moves no money: a creation lost behind a 5xx is left alone.
      () => this.nextAttempt(pago, false),
    );
    const [registrado] = await queryRows(this.pool, REGISTRAR_INTENT, [pago.id, state.id, pago.intento]);
    if (!registrado) throw await this.overtaken(pago);
    return state.id;
  }

  private async confirm(pago: PagoEnCurso & { intentId: string }, paymentToken: string): Promise<Cobro> {
    let state: IntentState;
    try {
      state = await this.gateway.confirmIntent({ key: keyOf(pago, 'confirm'), intentId: pago.intentId, paymentToken });
    } catch (error) {
      if (!(error instanceof GatewayIndeterminateError)) throw error;
      return this.afterUnknownConfirmation(pago, error);
    }
    if (state.status === 'failed') return { estado: 'FALLIDO', intentId: state.id };
    const cobro = this.settledBy(state);
    // Confirmed, yet neither charged nor refused: the intent was canceled under us (the reconciler).
    if (!cobro) throw new ProcesadorSinRespuestaError();
    return cobro;
  }

  /**
   * The confirmation's outcome is unknown: the intent, retrieved by id, says what it did. Still
   * waiting for one, after a 5xx the processor keeps under the key: the next attempt confirms
   * under a new key (the intent itself charges at most once, whatever the keys).
   */
  private async afterUnknownConfirmation(pago: PagoEnCurso & { intentId: string }, error: GatewayIndeterminateError): Promise<Cobro> {
    const state = await this.ask(() => this.gateway.retrieveIntent(pago.intentId));
    const cobro = this.settledBy(state);
    if (cobro) return cobro;
    if (error.replaysFailure && state.status !== 'canceled') await this.nextAttempt(pago, true);
    throw new ProcesadorSinRespuestaError();
  }

  /** The outcome the intent's state settles; still processing is unknown for now (503: the webhook, a retry or the reconciler settles it). */
  private settledBy(state: IntentState): Cobro | undefined {
    if (state.status === 'processing') throw new ProcesadorSinRespuestaError();
    return cobroDe(state);
  }

  /** The attempt after `pago`'s: new keys, keeping its intent or not. No row: another attempt moved it first. */
  private async nextAttempt(pago: PagoEnCurso, keepIntent: boolean): Promise<PagoEnCurso> {
    const [next] = await queryRows<{ intento: number }>(this.pool, SIGUIENTE_INTENTO, [pago.id, pago.intento, keepIntent]);
    if (!next) throw await this.overtaken(pago);
    return { ...pago, intento: next.intento, intentId: keepIntent ? pago.intentId : null };
  }

  /** Why a conditional write of this attempt matched nothing: settled by another (read it), or another attempt is on it. */
  private async overtaken(pago: PagoEnCurso): Promise<Error> {
    const [row] = await queryRows<{ estado: string }>(this.pool, ESTADO_DE_PAGO, [pago.id]);
    return row?.estado === 'PENDIENTE' ? new ProcesadorSinRespuestaError() : new PagoAsentadoError();
  }

  /**
   * A processor call whose unknown outcome becomes a 503 for the client; `onReplayedFailure` runs
   * first when the processor answered a 5xx it keeps under the call's key.
   */
  private async ask<T>(call: () => Promise<T>, onReplayedFailure?: () => Promise<unknown>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof GatewayIndeterminateError)) throw error;
      if (error.replaysFailure) await onReplayedFailure?.();
      throw new ProcesadorSinRespuestaError();
    }
  }
}

function keyOf(pago: PagoEnCurso, paso: PasoProcesador): string {
  return processorKeyOf(pago.operationId, pago.intento, paso);
}
