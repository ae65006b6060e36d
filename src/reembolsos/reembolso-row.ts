import { Reembolso } from './reembolso.entity.js';

/** A refund as the statements of `reembolsos.sql.ts` return it: `monto` as text (bigint). */
export type ReembolsoRow = Omit<Reembolso, 'monto'> & { monto: string };

export function toReembolso(row: ReembolsoRow): Reembolso {
  return Object.assign(new Reembolso(), row, { monto: Number(row.monto) });
}
