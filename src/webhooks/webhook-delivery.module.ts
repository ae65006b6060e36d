import { type DynamicModule, Module } from '@nestjs/common';
import { OutboxModule } from '../eventos/outbox.module.js';
import { OutboxRelay } from './outbox-relay.js';
import { WebhookDeliverer } from './webhook-deliverer.js';
import { WEBHOOK_DELIVERY_OPTIONS, type WebhookDeliveryOptions } from './webhook-delivery.options.js';
import { WebhookOperations } from './webhook-operations.js';
import { WebhooksEvents } from './webhooks.events.js';

/** Delivery of the outbox to webhook endpoints, on pg-boss: what the service and (enqueueing only) the ops CLI run. */
@Module({})
export class WebhookDeliveryModule {
  static forRoot(options: WebhookDeliveryOptions): DynamicModule {
    return {
      module: WebhookDeliveryModule,
      global: true,
      imports: [OutboxModule],
      providers: [WebhookDeliverer, OutboxRelay, WebhooksEvents, WebhookOperations, { provide: WEBHOOK_DELIVERY_OPTIONS, useValue: options }],
      exports: [WebhookDeliverer, WebhooksEvents, WebhookOperations],
    };
  }
}
