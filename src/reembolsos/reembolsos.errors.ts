import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';
import type { EstadoPago } from '../pagos/pago.entity.js';

// A PENDIENTE payment settles within a processor call, an abandoned one within a reconcile pass.
export const PAGO_EN_CURSO_RETRY_AFTER_SECONDS = 2;

/**
 * Only an APROBADO payment gives money back. Declined or failed: final, stored under the key. Still
 * PENDIENTE: transient (it carries `Retry-After`), not stored, so a retry with the key runs again.
 */
export class PagoNoReembolsableError extends ProblemException {
  constructor(pagoId: string, estado: EstadoPago) {
    const pendiente = estado === 'PENDIENTE';
    super(
      { slug: 'pago-no-reembolsable', title: 'Payment cannot be refunded', status: HttpStatus.CONFLICT },
      pendiente
        ? `Payment ${pagoId} is still being charged; nothing was refunded. Retry with the same Idempotency-Key after ${PAGO_EN_CURSO_RETRY_AFTER_SECONDS} second(s).`
        : `Payment ${pagoId} is ${estado}: only an APROBADO payment can be refunded. Nothing was refunded.`,
      { estadoPago: estado },
      pendiente ? { 'Retry-After': String(PAGO_EN_CURSO_RETRY_AFTER_SECONDS) } : {},
    );
  }
}

/**
 * The refunds of a payment never add up to more than it charged. Final for this key and amount
 * (stored): `montoReembolsable` is what the payment had left when this request was decided; it grows
 * only if a refund still in progress fails, so ask again with a new key for what is left.
 */
export class ReembolsoExcedePagoError extends ProblemException {
  constructor(pagoId: string, montoSolicitado: number, montoReembolsable: number) {
    super(
      { slug: 'reembolso-excede-pago', title: 'Refund exceeds the payment', status: HttpStatus.CONFLICT },
      `Payment ${pagoId} has ${montoReembolsable} left to refund (refunds in progress count); ${montoSolicitado} was not refunded. ` +
        'Refund at most montoReembolsable with a new Idempotency-Key.',
      { montoSolicitado, montoReembolsable },
    );
  }
}

/**
 * The processor refused the refund for good (the charge was refunded or disputed elsewhere, say):
 * nothing was refunded, and the amount is back on the payment. Final for this key (stored).
 */
export class ReembolsoRechazadoError extends ProblemException {
  constructor(pagoId: string, reason: string) {
    super(
      { slug: 'reembolso-rechazado', title: 'Refund refused by the processor', status: HttpStatus.CONFLICT },
      `The payment processor refused to refund payment ${pagoId} (${reason}). Nothing was refunded.`,
    );
  }
}

export class ReembolsoNoEncontradoError extends ProblemException {
  constructor() {
    super({ slug: 'reembolso-no-encontrado', title: 'Refund not found', status: HttpStatus.NOT_FOUND }, 'No refund of yours has this id on this payment.');
  }
}
