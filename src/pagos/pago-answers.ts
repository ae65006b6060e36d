import { HttpStatus } from '@nestjs/common';
import type { StoredResponse } from '../idempotency/idempotency.types.js';
import { storedJson, storedProblem } from '../idempotency/stored-response.js';
import { toPagoResponse } from './dto/pago.response.js';
import type { Pago } from './pago.entity.js';
import { PagoRechazadoError } from './pagos.errors.js';

export function pagoLocation(id: string): string {
  return `/pagos/${id}`;
}

/**
 * What `POST /pagos` answers for an approved or declined payment, byte for byte as the route stores
 * it: for the reconciler, which completes an abandoned operation's key on the route's behalf.
 */
export function storedAnswerOf(pago: Pago): StoredResponse {
  if (pago.estado === 'RECHAZADO') return storedProblem(new PagoRechazadoError(toPagoResponse(pago)));
  return storedJson(HttpStatus.CREATED, toPagoResponse(pago), { location: pagoLocation(pago.id) });
}
