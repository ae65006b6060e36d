import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';

export class WebhookNoEncontradoError extends ProblemException {
  constructor() {
    super({ slug: 'webhook-no-encontrado', title: 'Webhook endpoint not found', status: HttpStatus.NOT_FOUND }, 'No webhook endpoint of yours has this id.');
  }
}

/** The URL is well-formed but may not be called: not https, or a host on an internal address (SSRF). Final: stored under the key. */
export class UrlDeWebhookNoPermitidaError extends ProblemException {
  constructor(reason: string) {
    super(
      { slug: 'url-de-webhook-no-permitida', title: 'Webhook URL not allowed', status: HttpStatus.UNPROCESSABLE_ENTITY },
      `${reason}. Use an https URL on a public address, with a new Idempotency-Key.`,
      { motivo: reason },
    );
  }
}
