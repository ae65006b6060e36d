import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';
import { IDEMPOTENCY_KEY_HEADER, IN_FLIGHT_RETRY_AFTER_SECONDS } from './idempotency.constants.js';

export class IdempotencyKeyInvalidError extends ProblemException {
  constructor(reason: string) {
    super(
      { slug: 'idempotency-key-invalid', title: 'Missing or invalid Idempotency-Key', status: HttpStatus.BAD_REQUEST },
      `${reason[0]!.toUpperCase()}${reason.slice(1)}. Send a new UUID per operation and reuse it on every retry of it.`,
    );
  }
}

export class IdempotencyKeyReusedError extends ProblemException {
  constructor() {
    super(
      { slug: 'idempotency-key-reused', title: 'Idempotency-Key reused with a different request', status: HttpStatus.UNPROCESSABLE_ENTITY },
      `This ${IDEMPOTENCY_KEY_HEADER} was first used with a different request. Retry the original request unchanged, or use a new key for a new operation.`,
    );
  }
}

export class IdempotencyKeyInFlightError extends ProblemException {
  constructor() {
    super(
      { slug: 'idempotency-key-in-flight', title: 'A request with this Idempotency-Key is in progress', status: HttpStatus.CONFLICT },
      `The first request with this ${IDEMPOTENCY_KEY_HEADER} has not finished. Retry with the same key after ${IN_FLIGHT_RETRY_AFTER_SECONDS} second(s) to get its result.`,
      {},
      { 'Retry-After': String(IN_FLIGHT_RETRY_AFTER_SECONDS) },
    );
  }
}

/** The claim was taken over while this attempt ran; its work was rolled back and the new owner's stands. */
export class IdempotencyClaimLostError extends ProblemException {
  constructor() {
    super(
      { slug: 'idempotency-key-in-flight', title: 'A request with this Idempotency-Key is in progress', status: HttpStatus.CONFLICT },
      `A newer attempt with this ${IDEMPOTENCY_KEY_HEADER} took over. Retry with the same key after ${IN_FLIGHT_RETRY_AFTER_SECONDS} second(s) to get its result.`,
      {},
      { 'Retry-After': String(IN_FLIGHT_RETRY_AFTER_SECONDS) },
    );
  }
}
