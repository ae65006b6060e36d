import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxModule } from '../eventos/outbox.module.js';
import { GatewayModule } from '../gateway/gateway.module.js';
import { ProcessorWebhooksModule } from '../processor-webhooks/processor-webhooks.module.js';
import { DesenlacesDeReembolso } from './desenlaces-de-reembolso.js';
import { Reembolso } from './reembolso.entity.js';
import { ReembolsosController } from './reembolsos.controller.js';
import { ReembolsosReconcilerModule } from './reembolsos-reconciler.module.js';
import { ReembolsosService } from './reembolsos.service.js';
import { ReembolsosWebhookHandler } from './reembolsos-webhook.handler.js';

@Module({
  imports: [TypeOrmModule.forFeature([Reembolso]), GatewayModule, OutboxModule, ReembolsosReconcilerModule, ProcessorWebhooksModule],
  controllers: [ReembolsosController],
  providers: [ReembolsosService, DesenlacesDeReembolso, ReembolsosWebhookHandler],
})
export class ReembolsosModule {}
