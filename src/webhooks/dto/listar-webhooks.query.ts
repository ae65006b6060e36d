import { z } from 'zod';

// A page of endpoints; a client with more (WEBHOOKS_MAX_PER_CLIENT allows up to 1000) asks again from the last one it got.
export const WEBHOOKS_PAGE_DEFAULT = 100;
export const WEBHOOKS_PAGE_MAX = 100;

const LIMIT_ERROR = `limit must be an integer from 1 to ${WEBHOOKS_PAGE_MAX}`;

/** The query of `GET /webhooks`, as `GET /eventos` pages. */
export const ListarWebhooksQuery = z.strictObject({
  desde: z
    .string({ error: 'desde must be given once' })
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { error: 'desde must be a webhook endpoint id (a UUID)' })
    .optional()
    .meta({ description: 'List the endpoints registered after this one (the last one you got); from the oldest when absent.', example: '7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6' }),
  limit: z
    .string({ error: 'limit must be given once' })
    .regex(/^[0-9]{1,3}$/, { error: LIMIT_ERROR })
    .transform(Number)
    .pipe(z.number().int().min(1, { error: LIMIT_ERROR }).max(WEBHOOKS_PAGE_MAX, { error: LIMIT_ERROR }))
    .optional()
    .meta({ description: `At most this many endpoints (default ${WEBHOOKS_PAGE_DEFAULT}); fewer means there are no more.`, example: '100' }),
});

export type ListarWebhooksQuery = z.infer<typeof ListarWebhooksQuery>;
