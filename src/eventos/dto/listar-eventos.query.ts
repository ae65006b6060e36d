import { z } from 'zod';

// A page of events; a consumer catching up after an outage asks again from the last one it got.
export const EVENTS_PAGE_DEFAULT = 50;
export const EVENTS_PAGE_MAX = 100;

/** The query of `GET /eventos`. */
export const ListarEventosQuery = z.strictObject({
  desde: z
    .string({ error: 'desde must be given once' })
    .regex(/^evt_[0-9a-f]{32}$/, { error: 'desde must be an event id (evt_ and 32 hexadecimal digits)' })
    .optional()
    .meta({ description: 'List the events after this one (the last one you got); from the oldest kept when absent.', example: 'evt_8f14e45fceea467a9b6c2f1e0d3c4b5a' }),
  limit: z
    .string({ error: 'limit must be given once' })
    .regex(/^[0-9]{1,3}$/, { error: `limit must be an integer from 1 to ${EVENTS_PAGE_MAX}` })
    .transform(Number)
    .pipe(z.number().int().min(1, { error: `limit must be an integer from 1 to ${EVENTS_PAGE_MAX}` }).max(EVENTS_PAGE_MAX, { error: `limit must be an integer from 1 to ${EVENTS_PAGE_MAX}` }))
    .optional()
    .meta({ description: `At most this many events (default ${EVENTS_PAGE_DEFAULT}).`, example: '50' }),
});

export type ListarEventosQuery = z.infer<typeof ListarEventosQuery>;
