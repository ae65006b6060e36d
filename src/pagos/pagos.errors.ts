import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';
import { type PagoResponse } from './dto/pago.response.js';

export class PagoRechazadoError extends ProblemException {
  constructor(pago: PagoResponse) {
    super(
      { slug: 'pago-rechazado', title: 'Payment declined', status: HttpStatus.PAYMENT_REQUIRED },
      'The processor declined the payment method. Nothing was charged; ask the customer for another method and pay with a new Idempotency-Key.',
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

export class PagoNoEncontradoError extends ProblemException {
  constructor() {
    super({ slug: 'pago-no-encontrado', title: 'Payment not found', status: HttpStatus.NOT_FOUND }, 'No payment of yours has this id.');
  }
}
