import { z } from 'zod';

// A page of payments; a client with more asks again from the last one it got (`desde`).
export const PAGOS_PAGE_DEFAULT = 100;
export const PAGOS_PAGE_MAX = 100;

const LIMIT_ERROR = `limit must be an integer from 1 to ${PAGOS_PAGE_MAX}`;

/** The query of `GET /pagos`: paged as `GET /eventos` and `GET /webhooks` are, optionally one order's. */
export const ListarPagosQuery = z.strictObject({
  numeroOrden: z
    .string({ error: 'numeroOrden must be given once' })
    .regex(/^[A-Za-z0-9._-]{1,64}$/, { error: 'numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"' })
    .optional()
    .meta({ description: 'Only the payments of this order.', example: 'ORD-1001' }),
  desde: z
    .string({ error: 'desde must be given once' })
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { error: 'desde must be a payment id (a UUID)' })
    .optional()
    .meta({ description: 'List the payments created after this one (the last one you got); from the oldest when absent.', example: '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11' }),
  limit: z
    .string({ error: 'limit must be given once' })
    .regex(/^[0-9]{1,3}$/, { error: LIMIT_ERROR })
    .transform(Number)
    .pipe(z.number().int().min(1, { error: LIMIT_ERROR }).max(PAGOS_PAGE_MAX, { error: LIMIT_ERROR }))
    .optional()
    .meta({ description: `At most this many payments (default ${PAGOS_PAGE_DEFAULT}); fewer means there are no more.`, example: '100' }),
});

export type ListarPagosQuery = z.infer<typeof ListarPagosQuery>;
