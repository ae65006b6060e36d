import { applyDecorators } from '@nestjs/common';
import { ApiHeader, DECORATORS, type ResponseObject } from '@nestjs/swagger';
import { ApiProblems } from '../http/api-problems.decorator.js';
import {
  IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, MAX_KEY_LENGTH, PREFER_HEADER, PREFERENCE_APPLIED_HEADER,
} from './idempotency.constants.js';
import { IdempotencyKeyInFlightError, IdempotencyKeyInvalidError, IdempotencyKeyReusedError } from './idempotency.errors.js';

const KEY_DESCRIPTION =
  `Names one operation: a new value (a UUID) per operation, the same value on every retry of it. ` +
  `1–${MAX_KEY_LENGTH} printable ASCII characters, bare (\`8e03…\`) or as a quoted structured-field string ` +
  `(\`"8e03…"\`; the quotes are not part of the key). Keys are scoped to the authenticated client.`;

const REPLAYED_HEADER = {
  description:
    '`true` when this is the stored answer of an earlier request with the same key, replayed without ' +
    'running anything again; absent on the first answer.',
  schema: { type: 'string', enum: ['true'] },
};

const PREFER_DESCRIPTION =
  'RFC 7240. `wait=N`: when another request with this key is still running, wait up to N seconds ' +
  '(at most the server\'s limit, 10 by default) for its answer and get that answer, instead of `409` at once. ' +
  'If that request fails and frees the key, this one runs the operation itself. Without it the server ' +
  'waits its default (0 unless configured). Other preferences, and a `wait` that is not a whole number, are ignored.';

const PREFERENCE_APPLIED_HEADER_DOC = {
  description: '`wait=N` when this request waited (N seconds at most) for another request with the same key; absent otherwise.',
  schema: { type: 'string', example: 'wait=10' },
};

/**
 * The OpenAPI half of `@Idempotent()`: the required key header, `Prefer: wait`, the problems the
 * mechanism itself answers, and the replay and preference headers on the route's success (and
 * in-flight) responses. Those must be documented by decorators below `@Idempotent()`, which run first.
 */
export function ApiIdempotent(): MethodDecorator {
  return applyDecorators(
    ApiHeader({ name: IDEMPOTENCY_KEY_HEADER, required: true, description: KEY_DESCRIPTION, example: '8e03978e-40d5-43e8-bc93-6894a57f9324' }),
    ApiHeader({ name: PREFER_HEADER, required: false, description: PREFER_DESCRIPTION, example: 'wait=10' }),
    ApiProblems([
      new IdempotencyKeyInvalidError('the Idempotency-Key header is required on this route'),
      new IdempotencyKeyInFlightError(),
      new IdempotencyKeyReusedError(),
    ]),
    markSuccessResponsesReplayable,
  );
}

// A waiter's answer is a success (replayed, or run after a takeover) or the 409 of a wait that ran out.
const markSuccessResponsesReplayable: MethodDecorator = (_target, _key, descriptor) => {
  const responses: Record<string, ResponseObject> = Reflect.getMetadata(DECORATORS.API_RESPONSE, descriptor.value as object) ?? {};
  const headersFor = (status: string): ResponseObject['headers'] => {
    if (status.startsWith('2')) return { [IDEMPOTENT_REPLAYED_HEADER]: REPLAYED_HEADER, [PREFERENCE_APPLIED_HEADER]: PREFERENCE_APPLIED_HEADER_DOC };
    return status === '409' ? { [PREFERENCE_APPLIED_HEADER]: PREFERENCE_APPLIED_HEADER_DOC } : {};
  };
  const marked = Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [status, { ...response, headers: { ...response.headers, ...headersFor(status) } }]),
  );
  Reflect.defineMetadata(DECORATORS.API_RESPONSE, marked, descriptor.value as object);
};
