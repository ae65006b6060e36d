/**
 * What an endpoint answers, in Stripe's shapes. An `Answer` is final and, under an idempotency key,
 * stored and replayed byte for byte. A `RequestRejection` (thrown) is an answer that is NOT stored:
 * the request was refused before it changed anything, so the key is released for another try.
 */
export interface Answer {
  readonly status: number;
  /** The exact JSON text sent, and replayed. */
  readonly body: string;
}

export type StripeErrorType = 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';

export interface StripeErrorFields {
  type: StripeErrorType;
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  payment_intent?: unknown;
}

export function answer(status: number, object: unknown): Answer {
  return { status, body: JSON.stringify(object) };
}

export function errorAnswer(status: number, error: StripeErrorFields): Answer {
  return answer(status, { error });
}

export class RequestRejection extends Error {
  readonly answer: Answer;

  constructor(status: number, error: StripeErrorFields) {
    super(error.message);
    this.answer = errorAnswer(status, error);
  }
}

/** A parameter is missing or malformed (400, not stored). */
export function invalidParameter(param: string, message: string): RequestRejection {
  return new RequestRejection(400, { type: 'invalid_request_error', param, message });
}

export function missingParameter(param: string): RequestRejection {
  return invalidParameter(param, `Missing required param: ${param}.`);
}

/** An id names nothing (not stored: retrying with the same key after creating it must work). */
export function resourceMissing(status: 400 | 404, param: string, message: string): RequestRejection {
  return new RequestRejection(status, { type: 'invalid_request_error', code: 'resource_missing', param, message });
}

/** A processor failure (500). Stored under the key when the endpoint executed. */
export function apiErrorAnswer(message = 'An unexpected error occurred in the local processor. Retrieve the object to learn its state.'): Answer {
  return errorAnswer(500, { type: 'api_error', message });
}
