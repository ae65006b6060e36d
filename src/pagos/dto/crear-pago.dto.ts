import { isISO4217CurrencyCode } from 'class-validator';
import { z } from 'zod';
import { amountInMinorUnits, fieldTypeError } from '../../http/validation.js';

export const MONTO_MAXIMO = 1_000_000_000_000;

/** The body of `POST /pagos`: validated by this schema, documented from it (OpenAPI `CrearPagoDto`). */
export const CrearPagoDto = z
  .strictObject({
    numeroOrden: z
      .string({ error: fieldTypeError('numeroOrden', 'a string') })
      .regex(/^[A-Za-z0-9._-]{1,64}$/, { error: 'numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"' })
      .meta({ description: "The merchant's order number; an order has at most one approved payment.", example: 'ORD-1001' }),
    monto: amountInMinorUnits('monto', MONTO_MAXIMO, 'e.g. 1999 for 19.99')
      .meta({ description: 'Amount in minor units (cents): 1999 is 19.99. Never a decimal.', example: 1999 }),
    moneda: z
      .string({ error: fieldTypeError('moneda', 'a string') })
      // A value that is not three capitals is told so once: the code list is checked only after.
      .regex(/^[A-Z]{3}$/, { error: 'moneda must be an upper-case ISO 4217 code such as "EUR"', abort: true })
      .refine(isISO4217CurrencyCode, { error: 'moneda must be an ISO 4217 currency code such as "EUR"' })
      .meta({ description: 'Upper-case ISO 4217 currency code.', example: 'EUR' }),
    token: z
      .string({ error: fieldTypeError('token', 'a string') })
      .min(1, { error: 'token must not be empty', abort: true })
      .max(255, { error: 'token must be at most 255 characters' })
      .regex(/^[\x21-\x7e]+$/, { error: 'token must be printable ASCII without spaces' })
      .meta({
        description:
          "What the mobile SDK gives: a PaymentMethod id (`pm_…`) or a legacy card token (`tok_…`), as Stripe accepts them; never stored. " +
          'Stripe test values work (`pm_card_visa`, `pm_card_chargeDeclined`, `tok_visa`); the local processor also declines `tok_decline` and fails on `tok_error`.',
        example: 'tok_visa',
      }),
  })
  .meta({ id: 'CrearPagoDto' });

export type CrearPagoDto = z.infer<typeof CrearPagoDto>;
