import { ApiProperty } from '@nestjs/swagger';
import { ESTADOS_PAGO, type EstadoPago } from '../pago.entity.js';
import type { PagoVisible } from '../pago-row.js';

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

  @ApiProperty({ enum: ESTADOS_PAGO, description: 'PENDIENTE: being charged; FALLIDO: the processor failed and nothing was charged.', example: 'APROBADO' })
  readonly estado!: EstadoPago;

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
    creadoEn: pago.creadoEn.toISOString(),
  };
}
