import { Module } from '@nestjs/common';
import { EventosController } from './eventos.controller.js';
import { EventosService } from './eventos.service.js';
import { OutboxModule } from './outbox.module.js';

/** The event feed (`GET /eventos`), over the outbox the features write. */
@Module({
  imports: [OutboxModule],
  controllers: [EventosController],
  providers: [EventosService],
})
export class EventosModule {}
