import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiTags } from '@nestjs/swagger';
import { UnauthenticatedError } from '../auth/auth.errors.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { DatabaseUnavailableError, RequestValidationError, ShuttingDownError } from '../http/http.errors.js';
import { BEARER_AUTH } from '../http/openapi-docs.js';
import { ValidationFailedMembers } from '../http/problem-document.schema.js';
import { EventoResponse } from './dto/evento.response.js';
import { CursorDeEventosDesconocidoError, EventoNoEncontradoError } from './eventos.errors.js';

/** The member `cursor-de-eventos-desconocido` adds. */
class CursorDeEventosDesconocidoMembers {
  @ApiProperty({ description: 'The `desde` that names no event of yours.', example: 'evt_8f14e45fceea467a9b6c2f1e0d3c4b5a' })
  readonly desde!: string;
}

export function ApiEventos(): ClassDecorator {
  return applyDecorators(
    ApiTags('eventos'),
    ApiBearerAuth(BEARER_AUTH),
    ApiProblems([new UnauthenticatedError(), new Error('example'), new DatabaseUnavailableError(), new ShuttingDownError()]),
  );
}

export function ApiListarEventos(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'listarEventos',
      summary: 'Your events, oldest first',
      description: 'Page with `desde` = the last id you got: no event is skipped or repeated, even while events are being written (an event appears once every older transaction has ended).',
    }),
    ApiOkResponse({ type: [EventoResponse] }),
    ApiProblems([new RequestValidationError(['limit must be an integer from 1 to 100'])], ValidationFailedMembers),
    ApiProblems([new CursorDeEventosDesconocidoError('evt_8f14e45fceea467a9b6c2f1e0d3c4b5a')], CursorDeEventosDesconocidoMembers),
  );
}

export function ApiEventoPorId(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ operationId: 'obtenerEvento', summary: 'One of your events', description: 'The event as it is delivered: its id is the `webhook-id` of every delivery.' }),
    ApiParam({ name: 'id', description: "Someone else's, unknown and malformed ids are all 404." }),
    ApiOkResponse({ type: EventoResponse }),
    ApiProblems([new EventoNoEncontradoError()]),
  );
}
