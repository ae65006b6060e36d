import { Module } from '@nestjs/common';
import { GatewayModule } from '../gateway/gateway.module.js';
import { ProcessorEventHandlers } from './processor-event-handlers.js';
import { ProcessorEventsPurgeJob } from './processor-events-purge.job.js';
import { ProcessorWebhooksController } from './processor-webhooks.controller.js';
import { ProcessorWebhooksEvents } from './processor-webhooks.events.js';
import { ProcessorWebhooks } from './processor-webhooks.service.js';

/**
 * The processor's webhooks in (`POST /stripe/webhooks`): verification, once-only application, and
 * the registry where payments and refunds put their handlers, and the purge of old event ids. Knows no feature.
 */
@Module({
  imports: [GatewayModule],
  controllers: [ProcessorWebhooksController],
  providers: [ProcessorWebhooks, ProcessorEventHandlers, ProcessorWebhooksEvents, ProcessorEventsPurgeJob],
  exports: [ProcessorEventHandlers, ProcessorWebhooksEvents],
})
export class ProcessorWebhooksModule {}
