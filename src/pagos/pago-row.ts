import { Pago } from './pago.entity.js';

/** What a payment's API answer shows (`PAGO_RESPUESTA_COLUMNS`); a whole `Pago` is one too. */
export type PagoVisible = Pick<Pago, 'id' | 'numeroOrden' | 'monto' | 'moneda' | 'montoReembolsado' | 'estado' | 'motivo' | 'creadoEn'> &
  Partial<Pick<Pago, 'clientSecret' | 'autenticacionExpiraEn'>>;

/** A payment as the statements of `pagos.sql.ts` return it: amounts as text (bigint). */
export type PagoRow = Omit<Pago, 'monto' | 'montoReembolsado'> & { monto: string; montoReembolsado: string };

export function toPago(row: PagoRow): Pago {
  return Object.assign(new Pago(), row, { monto: Number(row.monto), montoReembolsado: Number(row.montoReembolsado) });
}
