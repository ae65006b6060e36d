import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';

// The database recovers from restarts and failovers in seconds; asking sooner only adds load.
const DATABASE_RETRY_AFTER_SECONDS = 2;

export class DatabaseUnavailableError extends ProblemException {
  constructor() {
    super(
      { slug: 'service-unavailable', title: 'Service unavailable', status: HttpStatus.SERVICE_UNAVAILABLE },
      `The database is unreachable. Retry with the same Idempotency-Key after ${DATABASE_RETRY_AFTER_SECONDS} seconds.`,
      {},
      { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
    );
  }
}

export class RequestValidationError extends ProblemException {
  constructor(errors: readonly string[]) {
    super(
      { slug: 'validation-failed', title: 'Invalid request', status: HttpStatus.BAD_REQUEST },
      'The request is invalid (see errors); fix it and send it again. Invalid requests are never stored under an Idempotency-Key.',
      { errors },
    );
  }
}

export class UnsupportedMediaTypeError extends ProblemException {
  constructor() {
    super(
      { slug: 'unsupported-media-type', title: 'Unsupported media type', status: HttpStatus.UNSUPPORTED_MEDIA_TYPE },
      'Send the body as JSON with "Content-Type: application/json".',
    );
  }
}

export class ShuttingDownError extends ProblemException {
  constructor() {
    super(
      { slug: 'shutting-down', title: 'Service shutting down', status: HttpStatus.SERVICE_UNAVAILABLE },
      'This instance is shutting down and took no action. Retry with the same Idempotency-Key.',
      {},
      { 'Retry-After': '1' },
    );
  }
}

export class UnacceptableJsonError extends ProblemException {
  constructor(reason: string) {
    super(
      { slug: 'validation-failed', title: 'Invalid request', status: HttpStatus.BAD_REQUEST },
      `The request is invalid: ${reason}. Fix it and send it again. Invalid requests are never stored under an Idempotency-Key.`,
      { errors: [reason] },
    );
  }
}

export class MalformedJsonError extends ProblemException {
  constructor() {
    // The parser's message would quote the body back; a fixed text says enough.
    super({ slug: 'malformed-json', title: 'Malformed JSON', status: HttpStatus.BAD_REQUEST }, 'The body is not valid JSON. Fix it and send it again.');
  }
}

export class PayloadTooLargeError extends ProblemException {
  constructor(limitBytes: number) {
    super(
      { slug: 'payload-too-large', title: 'Payload too large', status: HttpStatus.PAYLOAD_TOO_LARGE },
      `The body is over ${limitBytes / 1024} kB once decompressed; send a smaller one.`,
    );
  }
}

/** For requests Node's HTTP parser rejects before any route runs. */
export class MalformedRequestError extends ProblemException {
  constructor() {
    super(
      { slug: 'malformed-request', title: 'Malformed request', status: HttpStatus.BAD_REQUEST },
      'The HTTP request could not be parsed (for example a control character in a header). Fix it and send it again.',
    );
  }
}
