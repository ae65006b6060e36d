import { HttpStatus } from '@nestjs/common';
import type { StoredResponse } from '../idempotency/idempotency.types.js';
import { storedJson, storedProblem } from '../idempotency/stored-response.js';
import { toPagoResponse } from './dto/pago.response.js';
import type { Pago } from './pago.entity.js';
import type { PagoVisible } from './pago-row.js';
import { ImporteNoAdmitidoError, PagoRechazadoError } from './pagos.errors.js';

export function pagoLocation(id: string): string {
  return `/pagos/${id}`;
}

/** What `POST /pagos` answers with: 202 while the customer authenticates, 201 once approved. */
export function statusOfAnswer(pago: PagoVisible): HttpStatus {
  return pago.estado === 'REQUIERE_AUTENTICACION' ? HttpStatus.ACCEPTED : HttpStatus.CREATED;
}

/** The problem a declined payment is answered with; `razon`: the processor's words, when it refused the amount. */
export function rechazoDe(pago: PagoVisible, razon?: string): PagoRechazadoError | ImporteNoAdmitidoError {
  if (pago.motivo === 'importe-no-admitido') return new ImporteNoAdmitidoError(toPagoResponse(pago), razon ?? 'the processor gave no reason');
  return new PagoRechazadoError(toPagoResponse(pago));
}

/**
 * What `POST /pagos` answers for an approved, declined or waiting payment, byte for byte as the route
 * stores it: for the reconciler, which completes an abandoned operation's key on the route's behalf.
 */
export function storedAnswerOf(pago: Pago): StoredResponse {
  if (pago.estado === 'RECHAZADO') return storedProblem(rechazoDe(pago));
  return storedJson(statusOfAnswer(pago), toPagoResponse(pago), { location: pagoLocation(pago.id) });
}
