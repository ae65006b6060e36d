import { IsInt, IsISO4217CurrencyCode, IsString, Length, Matches, Max, Min } from 'class-validator';

export const MONTO_MAXIMO = 1_000_000_000_000;

export class CrearPagoDto {
  /** The merchant's order number: at most one approved payment per order. */
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/, { message: 'numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"' })
  numeroOrden!: string;

  /** Amount in minor units (cents): an integer, never a decimal. */
  @IsInt({ message: 'monto must be an integer amount in minor units (e.g. 1999 for 19.99)' })
  @Min(1)
  @Max(MONTO_MAXIMO)
  monto!: number;

  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'moneda must be an upper-case ISO 4217 code such as "EUR"' })
  @IsISO4217CurrencyCode({ message: 'moneda must be an ISO 4217 currency code such as "EUR"' })
  moneda!: string;

  /** The payment method token issued by the processor's client SDK. */
  @IsString()
  @Length(1, 255)
  @Matches(/^[\x21-\x7e]+$/, { message: 'token must be printable ASCII without spaces' })
  token!: string;
}
