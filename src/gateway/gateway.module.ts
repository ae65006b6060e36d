import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { PAYMENT_GATEWAY } from './payment-gateway.js';
import { SimulatedPaymentGateway } from './simulated-payment-gateway.js';

/** Provides the `PaymentGateway` port; the simulated processor is the only adapter so far. */
@Module({
  providers: [
    {
      provide: PAYMENT_GATEWAY,
      inject: [DataSource, APP_CONFIG],
      useFactory: (dataSource: DataSource, config: AppConfig) => new SimulatedPaymentGateway(dataSource, config.gatewayLatencyMs),
    },
  ],
  exports: [PAYMENT_GATEWAY],
})
export class GatewayModule {}
