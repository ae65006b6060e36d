import { Controller, Headers, HttpCode, HttpStatus, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Public } from '../auth/public.decorator.js';
import { rawBodyOf } from '../http/json-body.parser.js';
import type { ProcessorEventOutcome } from './processor-webhooks.events.js';
import { ApiProcessorWebhooks, ApiRecibirEventoStripe } from './processor-webhooks.openapi.js';
import { ProcessorWebhooks } from './processor-webhooks.service.js';

/**
 * Where Stripe (or the local processor) posts its events. Public: the signature, not a bearer token,
 * says who sent it. Any 2xx tells the sender to stop redelivering; 400 and 503 make it try again.
 */
@Public()
@Controller('stripe/webhooks')
@ApiProcessorWebhooks()
export class ProcessorWebhooksController {
  constructor(private readonly webhooks: ProcessorWebhooks) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiRecibirEventoStripe()
  async recibir(@Req() request: FastifyRequest, @Headers('stripe-signature') signature: string | undefined): Promise<{ received: true; outcome: ProcessorEventOutcome }> {
    return { received: true, outcome: await this.webhooks.receive(rawBodyOf(request), signature) };
  }
}
