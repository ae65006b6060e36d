import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { MONTO_MAXIMO } from '../../pagos/dto/crear-pago.dto.js';

export const MOTIVO_MAXIMO = 200;

export class CrearReembolsoDto {
  /** Amount in minor units (cents): an integer, at most what the payment still has to refund. */
  @ApiProperty({
    type: 'integer', minimum: 1, maximum: MONTO_MAXIMO, example: 500,
    description: 'Amount to give back in minor units (cents): 500 is 5.00. Never a decimal; at most what the payment still has to refund. The simulator fails refunds of exactly 13.',
  })
  @IsInt({ message: 'monto must be an integer amount in minor units (e.g. 500 for 5.00)' })
  @Min(1)
  @Max(MONTO_MAXIMO)
  monto!: number;

  @ApiPropertyOptional({ description: 'Why, for your records; at most 200 characters without control characters.', maxLength: MOTIVO_MAXIMO, example: 'producto devuelto' })
  @IsOptional()
  @IsString()
  @MaxLength(MOTIVO_MAXIMO)
  // No control characters (C0, DEL, C1) and no lone surrogates: what is stored is what any client can print.
  @Matches(/^(?:[^\p{Cc}\p{Cs}])*$/u, { message: 'motivo must be printable text without control characters' })
  motivo?: string;
}
