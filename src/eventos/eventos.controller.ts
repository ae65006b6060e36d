import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { AuthenticatedClient } from '../auth/authenticated-client.js';
import { ListarEventosQuery, EVENTS_PAGE_DEFAULT } from './dto/listar-eventos.query.js';
import { CursorDeEventosDesconocidoError, EventoNoEncontradoError } from './eventos.errors.js';
import { ApiEventoPorId, ApiEventos, ApiListarEventos } from './eventos.openapi.js';
import { EventosService } from './eventos.service.js';

const EVENT_ID = /^evt_[0-9a-f]{32}$/;

/**
 * The event feed: what webhooks deliver, for consumers that poll or catch up. Answers are the stored
 * bodies, byte for byte what a delivery of the same event carries.
 */
@Controller('eventos')
@ApiEventos()
export class EventosController {
  constructor(private readonly eventos: EventosService) {}

  @Get()
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiListarEventos()
  async list(@Query({ schema: ListarEventosQuery }) query: ListarEventosQuery, @AuthenticatedClient() clientId: string): Promise<string> {
    const payloads = await this.eventos.list(clientId, query.desde, query.limit ?? EVENTS_PAGE_DEFAULT);
    if (!payloads) throw new CursorDeEventosDesconocidoError(query.desde!);
    return `[${payloads.join(',')}]`;
  }

  @Get(':id')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiEventoPorId()
  async findOne(@Param('id') id: string, @AuthenticatedClient() clientId: string): Promise<string> {
    // A malformed id can't name an event: the same 404 as an unknown one.
    const payload = EVENT_ID.test(id) ? await this.eventos.findOne(clientId, id) : undefined;
    if (!payload) throw new EventoNoEncontradoError();
    return payload;
  }
}
