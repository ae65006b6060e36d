import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { DatabaseUnavailableError, ShuttingDownError } from '../http/http.errors.js';
import { BODY_PROBLEMS } from '../http/json-body.parser.js';
import { PROCESSOR_EVENT_OUTCOMES, type ProcessorEventOutcome } from './processor-webhooks.events.js';
import { EventoProcesadorAplazadoError, EventoProcesadorInvalidoError } from './processor-webhooks.errors.js';

class EventoRecibidoResponse {
  @ApiProperty({ enum: [true] })
  readonly received!: true;

  @ApiProperty({
    enum: PROCESSOR_EVENT_OUTCOMES,
    description: 'applied: taken in; duplicate: taken in before, nothing changed; ignored: a type or an object that is not ours.',
    example: 'applied',
  })
  readonly outcome!: ProcessorEventOutcome;
}

export function ApiProcessorWebhooks(): ClassDecorator {
  return applyDecorators(ApiTags('stripe'), ApiProblems([new Error('example'), new DatabaseUnavailableError(), new ShuttingDownError()]));
}

export function ApiRecibirEventoStripe(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'recibirEventoStripe',
      summary: "Stripe's signed webhooks (register this URL in Stripe)",
      description:
        'Verified with `STRIPE_WEBHOOK_SECRET` over the exact bytes received (Stripe\'s 300 s tolerance). Each event is applied once, ' +
        'by its id, in the transaction of the change it causes; the service acts on what Stripe says of the object now, so late, ' +
        'repeated and reordered events are harmless. Handles `payment_intent.*` and the refund events.',
    }),
    ApiHeader({ name: 'Stripe-Signature', required: true, description: '`t=<unix seconds>,v1=<hex HMAC-SHA256>`, as Stripe signs.' }),
    ApiOkResponse({ type: EventoRecibidoResponse }),
    ApiProblems([...BODY_PROBLEMS, new EventoProcesadorInvalidoError('no signature matches the body.')]),
    ApiProblems([new Error('example'), new DatabaseUnavailableError(), new ShuttingDownError(), new EventoProcesadorAplazadoError()]),
  );
}
