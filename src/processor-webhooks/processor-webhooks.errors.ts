import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';

/** The signature, its timestamp or the body is wrong: nothing was read into the service. */
export class EventoProcesadorInvalidoError extends ProblemException {
  constructor(reason: string) {
    super(
      { slug: 'evento-procesador-invalido', title: 'Processor event not accepted', status: HttpStatus.BAD_REQUEST },
      `The event was not accepted: ${reason} Nothing was changed.`,
    );
  }
}

// Stripe redelivers on its own schedule; this only tells another sender when to come back.
const RETRY_AFTER_SECONDS = 30;

/** The processor could not be asked what is true now: nothing was applied, and a redelivery will be. */
export class EventoProcesadorAplazadoError extends ProblemException {
  constructor() {
    super(
      { slug: 'evento-procesador-aplazado', title: 'Processor event postponed', status: HttpStatus.SERVICE_UNAVAILABLE },
      'The payment processor could not be asked about this event, so nothing was applied; deliver it again later.',
      {},
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    );
  }
}
