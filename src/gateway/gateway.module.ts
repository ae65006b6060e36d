import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfigService } from '../config/app-config.js';
import { PAYMENT_GATEWAY } from './payment-gateway.js';
import { PROCESSOR_EVENT_VERIFIER, ProcessorEventRejectedError, type ProcessorEventVerifier } from './processor-events.js';
import { StripeEventVerifier } from './stripe-event-verifier.js';
import { StripePaymentGateway } from './stripe-payment-gateway.js';

// Without a signing secret no event can be trusted: every one is refused, and outcomes wait for the reconciler.
const NO_WEBHOOKS: ProcessorEventVerifier = {
  verify: () => {
    throw new ProcessorEventRejectedError('STRIPE_WEBHOOK_SECRET is not set, so no event can be verified');
  },
};

/**
 * Provides the `PaymentGateway` port on Stripe's API: Stripe itself, or the local processor that
 * speaks it (the entry point starts that one and puts its URL and key in the configuration), and
 * the verifier of the processor's signed webhooks.
 */
@Module({
  providers: [
    {
      provide: PAYMENT_GATEWAY,
      inject: [ConfigService],
      useFactory: (config: AppConfigService) => {
        const processor = config.get('processor', { infer: true });
        if (!processor.secretKey) throw new Error('no processor: the entry point must start the local one when STRIPE_SECRET_KEY is unset');
        return new StripePaymentGateway({ ...processor, secretKey: processor.secretKey, apiUrl: new URL(processor.apiUrl) });
      },
    },
    {
      provide: PROCESSOR_EVENT_VERIFIER,
      inject: [ConfigService],
      useFactory: (config: AppConfigService): ProcessorEventVerifier => {
        const { webhookSecret } = config.get('processor', { infer: true });
        return webhookSecret ? new StripeEventVerifier(webhookSecret) : NO_WEBHOOKS;
      },
    },
  ],
  exports: [PAYMENT_GATEWAY, PROCESSOR_EVENT_VERIFIER],
})
export class GatewayModule {}
