import { applyDecorators } from '@nestjs/common';
import { ApiHeader, DECORATORS, type ResponseObject } from '@nestjs/swagger';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, MAX_KEY_LENGTH } from './idempotency.constants.js';
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

/**
 * The OpenAPI half of `@Idempotent()`: the required key header, the problems the mechanism itself
 * answers, and the replay header on the route's success responses. Those must be documented by
 * decorators below `@Idempotent()`, which run first.
 */
export function ApiIdempotent(): MethodDecorator {
  return applyDecorators(
    ApiHeader({ name: IDEMPOTENCY_KEY_HEADER, required: true, description: KEY_DESCRIPTION, example: '8e03978e-40d5-43e8-bc93-6894a57f9324' }),
    ApiProblems([
      new IdempotencyKeyInvalidError('the Idempotency-Key header is required on this route'),
      new IdempotencyKeyInFlightError(),
      new IdempotencyKeyReusedError(),
    ]),
    markSuccessResponsesReplayable,
  );
}

const markSuccessResponsesReplayable: MethodDecorator = (_target, _key, descriptor) => {
  const responses: Record<string, ResponseObject> = Reflect.getMetadata(DECORATORS.API_RESPONSE, descriptor.value as object) ?? {};
  const marked = Object.fromEntries(
    Object.entries(responses).map(([status, response]) =>
      status.startsWith('2') ? [status, { ...response, headers: { ...response.headers, [IDEMPOTENT_REPLAYED_HEADER]: REPLAYED_HEADER } }] : [status, response],
    ),
  );
  Reflect.defineMetadata(DECORATORS.API_RESPONSE, marked, descriptor.value as object);
};
