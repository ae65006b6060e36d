import { z } from 'zod';

/** The query of `GET /pagos`. */
export const ListarPagosQuery = z.strictObject({
  numeroOrden: z
    .string({ error: 'numeroOrden must be given once' })
    .regex(/^[A-Za-z0-9._-]{1,64}$/, { error: 'numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"' })
    .optional()
    .meta({ description: 'Only the payments of this order.', example: 'ORD-1001' }),
});

export type ListarPagosQuery = z.infer<typeof ListarPagosQuery>;
