import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';

export class EventoNoEncontradoError extends ProblemException {
  constructor() {
    super({ slug: 'evento-no-encontrado', title: 'Event not found', status: HttpStatus.NOT_FOUND }, 'No event of yours has this id (events are kept for EVENTS_TTL_DAYS days).');
  }
}

/** `desde` names no event of the client's: never an empty page, which would look like "nothing new". */
export class CursorDeEventosDesconocidoError extends ProblemException {
  constructor(desde: string) {
    super(
      { slug: 'cursor-de-eventos-desconocido', title: 'Unknown event cursor', status: HttpStatus.NOT_FOUND },
      `No event of yours has id ${desde} (it may have been purged): list from the start, without desde, and skip the events you have seen by id.`,
      { desde },
    );
  }
}
