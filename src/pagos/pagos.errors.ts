import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';
import { type PagoResponse } from './dto/pago.response.js';

/** Why a payment was declined: the card's answer, or an authentication (3-D Secure) this service does not run yet. */
export type MotivoRechazo = 'tarjeta' | 'autenticacion';

const DETALLE_RECHAZO: Record<MotivoRechazo, string> = {
  tarjeta: 'The processor declined the payment method.',
  autenticacion: 'The payment method requires customer authentication (3-D Secure), which this service does not support yet; the attempt was canceled.',
};

export class PagoRechazadoError extends ProblemException {
  constructor(pago: PagoResponse, motivo: MotivoRechazo = 'tarjeta') {
    super(
      { slug: 'pago-rechazado', title: 'Payment declined', status: HttpStatus.PAYMENT_REQUIRED },
      `${DETALLE_RECHAZO[motivo]} Nothing was charged; ask the customer for another method and pay with a new Idempotency-Key.`,
      { pago },
    );
  }
}

export class OrdenYaPagadaError extends ProblemException {
  constructor(numeroOrden: string, pagoExistenteId: string) {
    super(
      { slug: 'orden-ya-pagada', title: 'Order already paid', status: HttpStatus.CONFLICT },
      `Order ${numeroOrden} already has approved payment ${pagoExistenteId}; it was not charged again.`,
      { pagoExistenteId },
    );
  }
}

// The other payment usually settles within a processor call; an abandoned one within a reconcile pass.
export const ORDEN_EN_CURSO_RETRY_AFTER_SECONDS = 2;

/** Transient (it carries `Retry-After`): not stored under the key, so a retry runs again once the order is free. */
export class OrdenConPagoEnCursoError extends ProblemException {
  constructor(numeroOrden: string, pagoExistenteId: string) {
    super(
      { slug: 'orden-con-pago-en-curso', title: 'Order has a payment in progress', status: HttpStatus.CONFLICT },
      `Order ${numeroOrden} has payment ${pagoExistenteId} in progress under another Idempotency-Key. Nothing was charged: ` +
        `retry this request with the same key after ${ORDEN_EN_CURSO_RETRY_AFTER_SECONDS} second(s); it pays the order if that payment does not.`,
      { pagoExistenteId },
      { 'Retry-After': String(ORDEN_EN_CURSO_RETRY_AFTER_SECONDS) },
    );
  }
}

export class PasarelaNoDisponibleError extends ProblemException {
  constructor() {
    super(
      { slug: 'pasarela-no-disponible', title: 'Payment processor unavailable', status: HttpStatus.BAD_GATEWAY },
      'The payment processor failed and charged nothing. Retry with the same Idempotency-Key.',
    );
  }
}

// Enough for a processor to come back from a blip; the reconciler settles what nobody retries.
export const PROCESADOR_RETRY_AFTER_SECONDS = 5;

/**
 * The processor could not be reached or did not say what it did (a timeout, a 5xx, a key still in
 * use). Transient and not stored: the operation stays PENDIENTE, and the retry with the same key
 * asks the processor before doing anything, so it happens at most once.
 */
export class ProcesadorSinRespuestaError extends ProblemException {
  constructor(operacion: 'payment' | 'refund' = 'payment') {
    super(
      { slug: 'procesador-sin-respuesta', title: 'Payment processor not answering', status: HttpStatus.SERVICE_UNAVAILABLE },
      `The payment processor could not be reached or did not say what it did. The ${operacion} stays pending and happens at most once: ` +
        `retry with the same Idempotency-Key after ${PROCESADOR_RETRY_AFTER_SECONDS} seconds.`,
      {},
      { 'Retry-After': String(PROCESADOR_RETRY_AFTER_SECONDS) },
    );
  }
}

export class PagoNoEncontradoError extends ProblemException {
  constructor() {
    super({ slug: 'pago-no-encontrado', title: 'Payment not found', status: HttpStatus.NOT_FOUND }, 'No payment of yours has this id.');
  }
}
