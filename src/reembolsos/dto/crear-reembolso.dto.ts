import { z } from 'zod';
import { amountInMinorUnits, fieldTypeError } from '../../http/validation.js';
import { MONTO_MAXIMO } from '../../pagos/dto/crear-pago.dto.js';

export const MOTIVO_MAXIMO = 200;

/** The body of `POST /pagos/{pagoId}/reembolsos`: validated by this schema, documented from it. */
export const CrearReembolsoDto = z
  .strictObject({
    monto: amountInMinorUnits('monto', MONTO_MAXIMO, 'e.g. 500 for 5.00')
      .meta({
        description: 'Amount to give back in minor units (cents): 500 is 5.00. Never a decimal; at most what the payment still has to refund. The local processor fails refunds of exactly 13 (a processor failure that refunds nothing).',
        example: 500,
      }),
    motivo: z
      .string({ error: fieldTypeError('motivo', 'a string') })
      .max(MOTIVO_MAXIMO, { error: `motivo must be at most ${MOTIVO_MAXIMO} characters` })
      // No control characters (C0, DEL, C1: all of \p{Cc}) and no lone surrogates: what is stored is what any
      // client can print. The pattern goes into the OpenAPI document, so it uses only `\xHH` escapes, which
      // every common regex engine reads alike (\p{…} is refused by Python's `re` and means something else
      // in JavaScript without the u flag). A lone surrogate can't be sent as UTF-8 text, only as a JSON
      // escape: the refinement catches it, undocumented.
      .regex(/^[^\x00-\x1F\x7F-\x9F]*$/, { error: 'motivo must be printable text without control characters' })
      .refine((text) => !/\p{Cs}/u.test(text), { error: 'motivo must be printable text without control characters' })
      .optional()
      .meta({ description: 'Why, for your records; at most 200 characters without control characters.', example: 'producto devuelto' }),
  })
  .meta({ id: 'CrearReembolsoDto' });

export type CrearReembolsoDto = z.infer<typeof CrearReembolsoDto>;
