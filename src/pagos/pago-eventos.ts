import type { DeclaredEvent } from '../eventos/outbox.js';
import { toPagoResponse } from './dto/pago.response.js';
import type { EstadoPago } from './pago.entity.js';
import type { PagoVisible } from './pago-row.js';

/** The events a payment announces: one per final state it reaches (a resumed FALLIDO payment may later announce another). */
export const TIPOS_EVENTO_PAGO = ['pago.aprobado', 'pago.rechazado', 'pago.fallido'] as const;
export type TipoEventoPago = (typeof TIPOS_EVENTO_PAGO)[number];

const TIPO_DE_ESTADO: Record<Exclude<EstadoPago, 'PENDIENTE'>, TipoEventoPago> = {
  APROBADO: 'pago.aprobado',
  RECHAZADO: 'pago.rechazado',
  FALLIDO: 'pago.fallido',
};

/** The event of a payment that just settled; `data` is exactly what `GET /pagos/{id}` shows. */
export function eventoDePago(clientId: string, pago: PagoVisible): DeclaredEvent {
  if (pago.estado === 'PENDIENTE') throw new Error(`payment ${pago.id} is PENDIENTE: nothing to announce`);
  return { clientId, type: TIPO_DE_ESTADO[pago.estado], data: toPagoResponse(pago) };
}
