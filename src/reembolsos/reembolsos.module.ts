import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxModule } from '../eventos/outbox.module.js';
import { GatewayModule } from '../gateway/gateway.module.js';
import { Reembolso } from './reembolso.entity.js';
import { ReembolsosController } from './reembolsos.controller.js';
import { ReembolsosReconcilerModule } from './reembolsos-reconciler.module.js';
import { ReembolsosService } from './reembolsos.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Reembolso]), GatewayModule, OutboxModule, ReembolsosReconcilerModule],
  controllers: [ReembolsosController],
  providers: [ReembolsosService],
})
export class ReembolsosModule {}
