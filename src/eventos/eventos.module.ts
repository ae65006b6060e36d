import { type DynamicModule, Module } from '@nestjs/common';
import { EventosController } from './eventos.controller.js';
import { EVENTOS_OPTIONS, type EventosOptions } from './eventos.options.js';
import { EventosPurgeJob } from './eventos-purge.job.js';
import { EventosService } from './eventos.service.js';
import { OutboxModule } from './outbox.module.js';

/** The event feed (`GET /eventos`) over the outbox the features write, and its purge. */
@Module({})
export class EventosModule {
  static forRoot(options: EventosOptions): DynamicModule {
    return {
      module: EventosModule,
      imports: [OutboxModule],
      controllers: [EventosController],
      providers: [EventosService, EventosPurgeJob, { provide: EVENTOS_OPTIONS, useValue: options }],
    };
  }
}
