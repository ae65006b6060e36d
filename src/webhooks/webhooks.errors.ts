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

/** The client already has as many endpoints as WEBHOOKS_MAX_PER_CLIENT allows. Final: stored under the key. */
export class LimiteDeWebhooksError extends ProblemException {
  constructor(limit: number) {
    super(
      { slug: 'limite-de-webhooks', title: 'Webhook endpoint limit reached', status: HttpStatus.CONFLICT },
      `You already have ${limit} webhook endpoints, the most a client may have. Delete one you no longer use (DELETE /webhooks/{id}), then register this one with a new Idempotency-Key.`,
      { limite: limit },
    );
  }
}

/** `desde` names no endpoint of the client's (deleted, or never theirs): never an empty page, which would look like the end. */
export class CursorDeWebhooksDesconocidoError extends ProblemException {
  constructor(desde: string) {
    super(
      { slug: 'cursor-de-webhooks-desconocido', title: 'Unknown webhook endpoint cursor', status: HttpStatus.NOT_FOUND },
      `No webhook endpoint of yours has id ${desde} (it may have been deleted): list from the start, without desde.`,
      { desde },
    );
  }
}
