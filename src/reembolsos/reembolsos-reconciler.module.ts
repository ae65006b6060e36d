import { Module } from '@nestjs/common';
import { OutboxModule } from '../eventos/outbox.module.js';
import { GatewayModule } from '../gateway/gateway.module.js';
import { PagosReconcilerModule } from '../pagos/pagos-reconciler.module.js';
import { ReembolsosEvents } from './reembolsos.events.js';
import { ReembolsosAbandonados } from './reembolsos-abandonados.js';

/** Abandoned refunds for the payments' reconciler (registered at start-up), and the events metrics count. */
@Module({
  imports: [GatewayModule, OutboxModule, PagosReconcilerModule],
  providers: [ReembolsosAbandonados, ReembolsosEvents],
  exports: [ReembolsosEvents],
})
export class ReembolsosReconcilerModule {}
