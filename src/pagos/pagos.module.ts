import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxModule } from '../eventos/outbox.module.js';
import { GatewayModule } from '../gateway/gateway.module.js';
import { ProcessorWebhooksModule } from '../processor-webhooks/processor-webhooks.module.js';
import { Cobros } from './cobros.js';
import { EsperasDePago } from './esperas-de-pago.js';
import { PagoConEspera } from './pago-con-espera.js';
import { Pago } from './pago.entity.js';
import { PagosController } from './pagos.controller.js';
import { PagosReconcileJob } from './pagos-reconcile.job.js';
import { PagosReconcilerModule } from './pagos-reconciler.module.js';
import { PagosService } from './pagos.service.js';
import { PagosWebhookHandler } from './pagos-webhook.handler.js';

@Module({
  imports: [TypeOrmModule.forFeature([Pago]), GatewayModule, OutboxModule, PagosReconcilerModule, ProcessorWebhooksModule],
  controllers: [PagosController],
  providers: [PagosService, Cobros, PagosReconcileJob, PagosWebhookHandler, EsperasDePago, PagoConEspera],
  exports: [PagosService],
})
export class PagosModule {}
