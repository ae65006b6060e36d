import { HttpStatus } from '@nestjs/common';
import type { StoredResponse } from '../idempotency/idempotency.types.js';
import { storedJson } from '../idempotency/stored-response.js';
import { toReembolsoResponse } from './dto/reembolso.response.js';
import type { Reembolso } from './reembolso.entity.js';

export function reembolsoLocation(reembolso: Pick<Reembolso, 'id' | 'pagoId'>): string {
  return `/pagos/${reembolso.pagoId}/reembolsos/${reembolso.id}`;
}

/** What `POST /pagos/{id}/reembolsos` answers with: 202 while the processor decides (PENDIENTE), 201 once approved. */
export function statusOfAnswer(reembolso: Pick<Reembolso, 'estado'>): HttpStatus {
  return reembolso.estado === 'PENDIENTE' ? HttpStatus.ACCEPTED : HttpStatus.CREATED;
}

/**
 * What `POST /pagos/{id}/reembolsos` answers for an approved refund, byte for byte as the route
 * stores it: for the reconciler, which completes an abandoned operation's key on the route's behalf.
 */
export function storedAnswerOf(reembolso: Reembolso): StoredResponse {
  return storedJson(statusOfAnswer(reembolso), toReembolsoResponse(reembolso), { location: reembolsoLocation(reembolso) });
}
