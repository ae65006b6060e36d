import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ESTADOS_PAGO, type EstadoPago, MOTIVOS_RECHAZO, type MotivoRechazo } from '../pago.entity.js';
import type { PagoVisible } from '../pago-row.js';

/** What the app needs to let the customer authenticate (3-D Secure) with Stripe's SDK. */
export class AutenticacionResponse {
  @ApiProperty({
    description: "The PaymentIntent's client secret: hand it to Stripe's mobile SDK (`handleNextAction`). Not a credential of this API; never log it.",
    example: 'pi_3QxAbc_secret_Zk1Hq2w',
  })
  readonly clientSecret!: string;

  @ApiProperty({ format: 'date-time', description: 'After this the attempt is canceled and the payment declined (`autenticacion-abandonada`).', example: '2026-12-02T18:36:37.435Z' })
  readonly expiraEn!: string;
}

/** A payment as the API answers it; a class only so that OpenAPI can describe it. */
export class PagoResponse {
  @ApiProperty({ format: 'uuid', example: '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11' })
  readonly id!: string;

  @ApiProperty({ example: 'ORD-1001' })
  readonly numeroOrden!: string;

  @ApiProperty({ type: 'integer', description: 'Minor units (cents).', example: 1999 })
  readonly monto!: number;

  @ApiProperty({ description: 'ISO 4217 currency code.', example: 'EUR' })
  readonly moneda!: string;

  @ApiProperty({ type: 'integer', description: 'What its approved refunds gave back, in minor units (0 until one is).', example: 0 })
  readonly montoReembolsado!: number;

  @ApiProperty({
    enum: ESTADOS_PAGO,
    description:
      'PENDIENTE: being charged; REQUIERE_AUTENTICACION: waiting for the customer (3-D Secure), nothing charged yet; ' +
      'FALLIDO: the processor failed and nothing was charged.',
    example: 'APROBADO',
  })
  readonly estado!: EstadoPago;

  @ApiPropertyOptional({ enum: MOTIVOS_RECHAZO, description: 'Only when RECHAZADO: why it was declined.', example: 'tarjeta' })
  readonly motivo?: MotivoRechazo;

  @ApiPropertyOptional({ type: AutenticacionResponse, description: 'Only when REQUIERE_AUTENTICACION.' })
  readonly autenticacion?: AutenticacionResponse;

  @ApiProperty({ format: 'date-time', example: '2026-12-02T18:21:37.435Z' })
  readonly creadoEn!: string;
}

export function toPagoResponse(pago: PagoVisible): PagoResponse {
  return {
    id: pago.id,
    numeroOrden: pago.numeroOrden,
    monto: pago.monto,
    moneda: pago.moneda,
    montoReembolsado: pago.montoReembolsado,
    estado: pago.estado,
    ...(pago.estado === 'RECHAZADO' && pago.motivo && { motivo: pago.motivo }),
    ...(pago.estado === 'REQUIERE_AUTENTICACION' && pago.clientSecret && pago.autenticacionExpiraEn && {
      autenticacion: { clientSecret: pago.clientSecret, expiraEn: pago.autenticacionExpiraEn.toISOString() },
    }),
    creadoEn: pago.creadoEn.toISOString(),
  };
}

/** What an event announces: never the client secret (events go to every endpoint and the feed of the client). */
export function toPagoAnunciado(pago: PagoVisible): PagoResponse {
  const { autenticacion: _secreto, ...anunciado } = toPagoResponse(pago);
  return anunciado;
}
