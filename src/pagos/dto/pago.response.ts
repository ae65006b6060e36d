import type { EstadoPago, Pago } from '../pago.entity.js';

export interface PagoResponse {
  readonly id: string;
  readonly numeroOrden: string;
  readonly monto: number;
  readonly moneda: string;
  readonly estado: EstadoPago;
  readonly creadoEn: string;
}

export function toPagoResponse(pago: Pago): PagoResponse {
  return {
    id: pago.id,
    numeroOrden: pago.numeroOrden,
    monto: pago.monto,
    moneda: pago.moneda,
    estado: pago.estado,
    creadoEn: pago.creadoEn.toISOString(),
  };
}
