import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfigService } from '../config/app-config.js';
import { PAYMENT_GATEWAY } from './payment-gateway.js';
import { StripePaymentGateway } from './stripe-payment-gateway.js';

/**
 * Provides the `PaymentGateway` port on Stripe's API: Stripe itself, or the local processor that
 * speaks it (the entry point starts that one and puts its URL and key in the configuration).
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
  ],
  exports: [PAYMENT_GATEWAY],
})
export class GatewayModule {}
