import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Mirrors the CHECK on `reembolsos.estado`. PENDIENTE: being refunded (or pending at the processor);
 * FALLIDO: nothing refunded (refused, failed, or failed after APROBADO). FALLIDO is reached from either.
 */
export const ESTADOS_REEMBOLSO = ['PENDIENTE', 'APROBADO', 'FALLIDO'] as const;
export type EstadoReembolso = (typeof ESTADOS_REEMBOLSO)[number];

/**
 * Our idempotency key at the processor for an operation's refund at its attempt `intento`: the same
 * key refunds once. A new attempt (after the processor failed and kept that failure under the old
 * key) first looks for a refund of the operation among the intent's refunds, by their metadata.
 */
export function refundKeyOf(operationId: string, intento: number): string {
  return `reembolso-${operationId}-${intento}`;
}

// bigint arrives from pg as a string; amounts are at most 10^12, well inside Number's exact range.
const bigintAsNumber = { to: (value: number) => value, from: (value: string) => Number(value) };

/** A refund of (part of) an APROBADO payment; its amount counts against the payment while PENDIENTE or APROBADO. */
@Entity({ name: 'reembolsos' })
export class Reembolso {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'pago_id', type: 'uuid' })
  pagoId!: string;

  @Column({ name: 'client_id', type: 'text' })
  clientId!: string;

  /** One per intended operation; the refund key at the gateway derives from it. */
  @Column({ name: 'operation_id', type: 'text', unique: true })
  operationId!: string;

  /** Minor units (cents). */
  @Column({ type: 'bigint', transformer: bigintAsNumber })
  monto!: number;

  @Column({ type: 'char', length: 3 })
  moneda!: string;

  @Column({ type: 'text', nullable: true })
  motivo!: string | null;

  @Column({ type: 'text' })
  estado!: EstadoReembolso;

  /** The payment's PaymentIntent at the processor, which the refund gives (part of) back. */
  @Column({ name: 'gateway_charge_id', type: 'text' })
  gatewayChargeId!: string;

  /** Numbers our key at the processor (see {@link refundKeyOf}). */
  @Column({ name: 'intento_procesador', type: 'integer' })
  intentoProcesador!: number;

  @Column({ name: 'gateway_refund_id', type: 'text', nullable: true })
  gatewayRefundId!: string | null;

  @Column({ name: 'creado_en', type: 'timestamptz' })
  creadoEn!: Date;

  @Column({ name: 'actualizado_en', type: 'timestamptz' })
  actualizadoEn!: Date;
}
