import type { DeclaredEvent } from '../eventos/outbox.js';
import { toPagoAnunciado } from './dto/pago.response.js';
import type { EstadoPago } from './pago.entity.js';
import type { PagoVisible } from './pago-row.js';

/**
 * The events a payment announces: one per state it reaches after PENDIENTE (a resumed FALLIDO payment
 * may later announce another). `pago.requiere_autenticacion` carries no client secret.
 */
export const TIPOS_EVENTO_PAGO = ['pago.requiere_autenticacion', 'pago.aprobado', 'pago.rechazado', 'pago.fallido'] as const;
export type TipoEventoPago = (typeof TIPOS_EVENTO_PAGO)[number];

const TIPO_DE_ESTADO: Record<Exclude<EstadoPago, 'PENDIENTE'>, TipoEventoPago> = {
  REQUIERE_AUTENTICACION: 'pago.requiere_autenticacion',
  APROBADO: 'pago.aprobado',
  RECHAZADO: 'pago.rechazado',
  FALLIDO: 'pago.fallido',
};

/** The event of a payment that just moved on; `data` is what `GET /pagos/{id}` shows, less the client secret. */
export function eventoDePago(clientId: string, pago: PagoVisible): DeclaredEvent {
  if (pago.estado === 'PENDIENTE') throw new Error(`payment ${pago.id} is PENDIENTE: nothing to announce`);
  return { clientId, type: TIPO_DE_ESTADO[pago.estado], data: toPagoAnunciado(pago) };
}
