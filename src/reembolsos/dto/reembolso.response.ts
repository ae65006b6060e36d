import { ApiProperty } from '@nestjs/swagger';
import { ESTADOS_REEMBOLSO, type EstadoReembolso, type Reembolso } from '../reembolso.entity.js';

/** A refund as the API answers it; a class only so that OpenAPI can describe it. */
export class ReembolsoResponse {
  @ApiProperty({ format: 'uuid', example: '5f2b1c9a-1d6e-4a57-8f0e-2c7d9b3a4e10' })
  readonly id!: string;

  @ApiProperty({ format: 'uuid', example: '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11' })
  readonly pagoId!: string;

  @ApiProperty({ type: 'integer', description: 'Minor units (cents).', example: 500 })
  readonly monto!: number;

  @ApiProperty({ description: "The payment's ISO 4217 currency code.", example: 'EUR' })
  readonly moneda!: string;

  @ApiProperty({ type: 'string', nullable: true, example: 'producto devuelto' })
  readonly motivo!: string | null;

  @ApiProperty({ enum: ESTADOS_REEMBOLSO, description: 'PENDIENTE: being refunded (the processor decides later); APROBADO: refunded; FALLIDO: nothing refunded (the processor refused or failed it, also after approving it), its amount is back on the payment.', example: 'APROBADO' })
  readonly estado!: EstadoReembolso;

  @ApiProperty({ format: 'date-time', example: '2026-12-03T09:12:05.120Z' })
  readonly creadoEn!: string;
}

export function toReembolsoResponse(reembolso: Reembolso): ReembolsoResponse {
  return {
    id: reembolso.id,
    pagoId: reembolso.pagoId,
    monto: reembolso.monto,
    moneda: reembolso.moneda,
    motivo: reembolso.motivo,
    estado: reembolso.estado,
    creadoEn: reembolso.creadoEn.toISOString(),
  };
}
