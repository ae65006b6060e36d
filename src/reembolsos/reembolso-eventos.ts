import type { DeclaredEvent } from '../eventos/outbox.js';
import { toReembolsoResponse } from './dto/reembolso.response.js';
import type { Reembolso } from './reembolso.entity.js';

/** The events a refund announces: one per final state it reaches (a resumed FALLIDO refund may later announce another). */
export const TIPOS_EVENTO_REEMBOLSO = ['reembolso.aprobado', 'reembolso.fallido'] as const;

/** The event of a refund that just settled; `data` is exactly what `GET /pagos/{pagoId}/reembolsos/{id}` shows. */
export function eventoDeReembolso(reembolso: Reembolso): DeclaredEvent {
  if (reembolso.estado === 'PENDIENTE') throw new Error(`refund ${reembolso.id} is PENDIENTE: nothing to announce`);
  return { clientId: reembolso.clientId, type: reembolso.estado === 'APROBADO' ? 'reembolso.aprobado' : 'reembolso.fallido', data: toReembolsoResponse(reembolso) };
}
