import { z } from 'zod';
import { fieldTypeError } from '../../http/validation.js';

/** The body of `POST /webhooks`; which event types exist is checked by the service (the app composes them). */
export const CrearWebhookDto = z.strictObject({
  url: z
    .string({ error: fieldTypeError('url', 'a string') })
    .max(2048, { error: 'url must be at most 2048 characters' })
    .meta({ description: 'Where events are POSTed: https, on a public address.', example: 'https://tienda.example/webhooks/pagos' }),
  eventos: z
    .array(z.string({ error: 'eventos must be a list of event types' }), { error: fieldTypeError('eventos', 'a list of event types') })
    .min(1, { error: 'eventos must name at least one event type' })
    .max(20, { error: 'eventos must name at most 20 event types' })
    .meta({ description: 'The event types to deliver.', example: ['pago.aprobado', 'pago.rechazado'] }),
});

export type CrearWebhookDto = z.infer<typeof CrearWebhookDto>;
