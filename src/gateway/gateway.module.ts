import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import type { AppConfigService } from '../config/app-config.js';
import { PAYMENT_GATEWAY } from './payment-gateway.js';
import { SimulatedPaymentGateway } from './simulated-payment-gateway.js';

/** Provides the `PaymentGateway` port; the simulated processor is the only adapter so far. */
@Module({
  providers: [
    {
      provide: PAYMENT_GATEWAY,
      inject: [DataSource, ConfigService],
      useFactory: (dataSource: DataSource, config: AppConfigService) =>
        new SimulatedPaymentGateway(dataSource, config.get('gatewayLatencyMs', { infer: true })),
    },
  ],
  exports: [PAYMENT_GATEWAY],
})
export class GatewayModule {}
