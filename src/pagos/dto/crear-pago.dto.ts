import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsISO4217CurrencyCode, IsString, Length, Matches, Max, Min } from 'class-validator';

export const MONTO_MAXIMO = 1_000_000_000_000;

export class CrearPagoDto {
  /** The merchant's order number: at most one approved payment per order. */
  @ApiProperty({ description: "The merchant's order number; an order has at most one approved payment.", pattern: '^[A-Za-z0-9._-]{1,64}$', example: 'ORD-1001' })
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, { message: 'numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"' })
  numeroOrden!: string;

  /** Amount in minor units (cents): an integer, never a decimal. */
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MONTO_MAXIMO, description: 'Amount in minor units (cents): 1999 is 19.99. Never a decimal.', example: 1999 })
  @IsInt({ message: 'monto must be an integer amount in minor units (e.g. 1999 for 19.99)' })
  @Min(1)
  @Max(MONTO_MAXIMO)
  monto!: number;

  @ApiProperty({ description: 'Upper-case ISO 4217 currency code.', pattern: '^[A-Z]{3}$', example: 'EUR' })
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'moneda must be an upper-case ISO 4217 code such as "EUR"' })
  @IsISO4217CurrencyCode({ message: 'moneda must be an ISO 4217 currency code such as "EUR"' })
  moneda!: string;

  /** The payment method token issued by the processor's client SDK. */
  @ApiProperty({
    description: "The payment-method token from the processor's client SDK; never stored. The simulator declines `tok_decline` and fails on `tok_error`.",
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x21-\\x7e]+$',
    example: 'tok_visa',
  })
  @IsString()
  @Length(1, 255)
  @Matches(/^[\x21-\x7e]+$/, { message: 'token must be printable ASCII without spaces' })
  token!: string;
}
