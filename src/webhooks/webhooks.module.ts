import { type DynamicModule, Module } from '@nestjs/common';
import { WebhooksController } from './webhooks.controller.js';
import { WEBHOOKS_OPTIONS, type WebhooksOptions } from './webhooks.options.js';
import { WebhooksService } from './webhooks.service.js';

/** Webhook endpoints per client (`/webhooks`). Generic: the app tells it which event types exist. */
@Module({})
export class WebhooksModule {
  static forRoot(options: WebhooksOptions): DynamicModule {
    return {
      module: WebhooksModule,
      controllers: [WebhooksController],
      providers: [WebhooksService, { provide: WEBHOOKS_OPTIONS, useValue: options }],
    };
  }
}
