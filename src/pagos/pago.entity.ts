import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Mirrors the CHECK on `pagos.estado`. PENDIENTE: charging; REQUIERE_AUTENTICACION: waiting for the
 * customer's 3-D Secure, nothing charged yet; FALLIDO: the processor failed, nothing charged.
 */
export const ESTADOS_PAGO = ['PENDIENTE', 'REQUIERE_AUTENTICACION', 'APROBADO', 'RECHAZADO', 'FALLIDO'] as const;
export type EstadoPago = (typeof ESTADOS_PAGO)[number];

/** States whose outcome is still to come: the order is held, and `Prefer: wait` waits on them. */
export const ESTADOS_EN_CURSO: readonly EstadoPago[] = ['PENDIENTE', 'REQUIERE_AUTENTICACION'];

/**
 * Why a payment was declined (mirrors the CHECK on `pagos.motivo`): the card's answer, a failed or
 * abandoned 3-D Secure authentication, a single-use card token spent already, an amount or currency
 * the processor does not take.
 */
export const MOTIVOS_RECHAZO = ['tarjeta', 'autenticacion', 'autenticacion-abandonada', 'token-usado', 'importe-no-admitido'] as const;
export type MotivoRechazo = (typeof MOTIVOS_RECHAZO)[number];

/** The three writes of a payment at the processor, each under a key of its own. */
export type PasoProcesador = 'create' | 'confirm' | 'cancel';

/**
 * Our idempotency key at the processor for one step of an operation's payment at its attempt
 * `intento`: derived, never random, so that a retry, a takeover or the reconciler resends the same
 * key with the same parameters and the processor does the step once.
 */
export function processorKeyOf(operationId: string, intento: number, paso: PasoProcesador): string {
  return `pagos-${operationId}-${paso}-${intento}`;
}

// bigint arrives from pg as a string; amounts are at most 10^12, well inside Number's exact range.

const bigintAsNumber = { to: (value: number) => value, from: (value: string | null) => (value === null ? null : Number(value)) };

@Entity({ name: 'pagos' })
export class Pago {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'client_id', type: 'text' })
  clientId!: string;

  /** One per intended operation; the charge key at the gateway derives from it. */
  @Column({ name: 'operation_id', type: 'text', unique: true })
  operationId!: string;

  @Column({ name: 'numero_orden', type: 'text' })
  numeroOrden!: string;

  /** Minor units (cents). */
  @Column({ type: 'bigint', transformer: bigintAsNumber })
  monto!: number;

  @Column({ type: 'char', length: 3 })
  moneda!: string;

  /** What its APROBADO refunds gave back, in minor units (see reembolsos/). */
  @Column({ name: 'monto_reembolsado', type: 'bigint', transformer: bigintAsNumber })
  montoReembolsado!: number;

  @Column({ type: 'text' })
  estado!: EstadoPago;

  /** The processor's PaymentIntent id, recorded before the intent is confirmed (before money can move). */
  @Column({ name: 'gateway_charge_id', type: 'text', nullable: true })
  gatewayChargeId!: string | null;

  /** Set when RECHAZADO, and only then. */
  @Column({ type: 'text', nullable: true })
  motivo!: MotivoRechazo | null;

  /** The intent's client secret while REQUIERE_AUTENTICACION: what the app hands to Stripe's SDK. */
  @Column({ name: 'client_secret', type: 'text', nullable: true })
  clientSecret!: string | null;

  /** While REQUIERE_AUTENTICACION: when the reconciler cancels the intent if the customer has not authenticated. */
  @Column({ name: 'autenticacion_expira_en', type: 'timestamptz', nullable: true })
  autenticacionExpiraEn!: Date | null;

  /** Numbers our keys at the processor (see {@link processorKeyOf}); moves on when a key can't serve any more. */
  @Column({ name: 'intento_procesador', type: 'integer' })
  intentoProcesador!: number;

  @Column({ name: 'creado_en', type: 'timestamptz' })
  creadoEn!: Date;

  @Column({ name: 'actualizado_en', type: 'timestamptz' })
  actualizadoEn!: Date;
}
