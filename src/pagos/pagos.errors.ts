import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';
import { type PagoResponse } from './dto/pago.response.js';
import type { MotivoRechazo } from './pago.entity.js';

const DETALLE_RECHAZO: Record<MotivoRechazo, string> = {
  tarjeta: 'The processor declined the payment method.',
  autenticacion: 'The customer failed the payment method\'s authentication (3-D Secure).',
  'autenticacion-abandonada': 'The customer did not complete the payment method\'s authentication (3-D Secure) in time, and the attempt was canceled.',
  'token-usado': 'The card token was used already; a token from the payment SDK pays once. Get a new one.',
  'importe-no-admitido': 'The processor does not take this amount or currency.',
};

/** A declined payment: final and stored under its key; the order is free to pay again. */
export class PagoRechazadoError extends ProblemException {
  constructor(pago: PagoResponse & { motivo?: MotivoRechazo }) {
    const motivo = pago.motivo ?? 'tarjeta';
    super(
      { slug: 'pago-rechazado', title: 'Payment declined', status: HttpStatus.PAYMENT_REQUIRED },
      `${DETALLE_RECHAZO[motivo]} Nothing was charged; ask the customer for another method and pay with a new Idempotency-Key.`,
      { pago },
    );
  }
}

/**
 * The processor refuses the amount or currency (below its minimum, above its maximum, a currency it
 * does not take): a 422 stored under the key, the payment RECHAZADO and the order free.
 */
export class ImporteNoAdmitidoError extends ProblemException {
  constructor(pago: PagoResponse, razon: string) {
    super(
      { slug: 'importe-no-admitido', title: 'Amount not accepted by the processor', status: HttpStatus.UNPROCESSABLE_ENTITY },
      `The payment processor refused this payment's amount or currency (${razon}). Nothing was charged; correct it and pay with a new Idempotency-Key.`,
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

/** `desde` names no payment of the client's: never an empty page, which would look like the end of the list. */
export class CursorDePagosDesconocidoError extends ProblemException {
  constructor(desde: string) {
    super(
      { slug: 'cursor-de-pagos-desconocido', title: 'Unknown payment cursor', status: HttpStatus.NOT_FOUND },
      `No payment of yours has id ${desde}: list from the start, without desde, or from the last payment id a page gave you.`,
      { desde },
    );
  }
}
