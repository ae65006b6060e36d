import { Module } from '@nestjs/common';
import { OutboxModule } from '../eventos/outbox.module.js';
import { GatewayModule } from '../gateway/gateway.module.js';
import { AbandonedOperations } from './abandoned-operations.js';
import { AutenticacionesPendientes } from './autenticaciones-pendientes.js';
import { DesenlacesDePago } from './desenlaces-de-pago.js';
import { PagosAbandonados } from './pagos-abandonados.js';
import { PagosEvents } from './pagos.events.js';
import { PagosReconciler } from './pagos-reconciler.js';

/** The reconciler without its schedule or any HTTP: what the service's job, the metrics and the operator's CLI share. */
@Module({
  imports: [GatewayModule, OutboxModule],
  providers: [PagosReconciler, PagosAbandonados, AbandonedOperations, PagosEvents, DesenlacesDePago, AutenticacionesPendientes],
  exports: [PagosReconciler, PagosEvents, DesenlacesDePago],
})
export class PagosReconcilerModule {}
