import { Pago } from './pago.entity.js';

/** A payment as the statements of `pagos.sql.ts` return it: amounts as text (bigint). */
export type PagoRow = Omit<Pago, 'monto' | 'montoReembolsado'> & { monto: string; montoReembolsado: string };

export function toPago(row: PagoRow): Pago {
  return Object.assign(new Pago(), row, { monto: Number(row.monto), montoReembolsado: Number(row.montoReembolsado) });
}
