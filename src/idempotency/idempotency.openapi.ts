import { applyDecorators, type Type } from '@nestjs/common';
import { ApiHeader, DECORATORS, type HeaderObject, type ResponseObject } from '@nestjs/swagger';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { PREFER_HEADER, PREFERENCE_APPLIED_HEADER } from '../http/prefer-wait.js';
import { renderProblem } from '../problems/problem.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, MAX_KEY_LENGTH } from './idempotency.constants.js';
import { IdempotencyKeyInFlightError, IdempotencyKeyInvalidError, IdempotencyKeyReusedError } from './idempotency.errors.js';
import { KEY_HEADER_PATTERN } from './idempotency-key.js';

const KEY_DESCRIPTION =
  `Names one operation: a new value (a UUID) per operation, the same value on every retry of it. ` +
  `1–${MAX_KEY_LENGTH} printable ASCII characters, bare (\`8e03…\`) or as a quoted structured-field string ` +
  `(\`"8e03…"\`; the quotes are not part of the key). Keys are scoped to the authenticated client.`;

// The longest value: every character of a quoted key escaped, plus the quotes.
const MAX_KEY_HEADER_LENGTH = 2 * MAX_KEY_LENGTH + 2;

const REPLAYED_HEADER: HeaderObject = {
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

const PREFERENCE_APPLIED_HEADER_DOC: HeaderObject = {
  description: '`wait=N` when this request waited (N seconds at most) for another request with the same key; absent otherwise.',
  schema: { type: 'string', example: 'wait=10' },
};

/**
 * The OpenAPI half of `@Idempotent()`: the required key header, `Prefer: wait`, the problems the
 * mechanism itself answers, and the replay and preference headers on the answers that carry them.
 * Those must be documented by decorators below `@Idempotent()`, which run first.
 */
export function ApiIdempotent(): MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: true,
      description: KEY_DESCRIPTION,
      schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_HEADER_LENGTH, pattern: KEY_HEADER_PATTERN, example: '8e03978e-40d5-43e8-bc93-6894a57f9324' },
    }),
    ApiHeader({ name: PREFER_HEADER, required: false, description: PREFER_DESCRIPTION, example: 'wait=10' }),
    ApiProblems([
      new IdempotencyKeyInvalidError('the Idempotency-Key header is required on this route'),
      new IdempotencyKeyInFlightError(),
      new IdempotencyKeyReusedError(),
    ]),
    markResponses((status) => status.startsWith('2'), { [IDEMPOTENT_REPLAYED_HEADER]: REPLAYED_HEADER }),
    // A waiter's answer is whatever came after the claim: a replay, the 409 of a wait that ran out,
    // or, once it took a released key over, the route's own run (a success, a problem, a failure).
    markResponses((status) => /^[2-5]/.test(status) && !PRE_CLAIM_STATUSES.has(status), { [PREFERENCE_APPLIED_HEADER]: PREFERENCE_APPLIED_HEADER_DOC }),
  );
}

// Answered before a key is claimed (authentication, rate limit, body parsing, the key itself, validation, a mismatch): never after a wait.
const PRE_CLAIM_STATUSES = new Set(['400', '401', '413', '415', '422', '429']);

/**
 * Documents problems a route's handler answers for good: stored under the key like a success and
 * replayed, with `Idempotent-Replayed`, to every retry. Put it with the route's own response
 * decorators (below `@Idempotent()`). Refuses transient problems (with `Retry-After`): those are never stored.
 *
 * @example
 *   @Idempotent()
 *   @ApiStoredProblems([new OrderAlreadyPaidError('ORD-1', exampleId)], OrderAlreadyPaidMembers)
 */
export function ApiStoredProblems(errors: readonly unknown[], members?: Type): MethodDecorator {
  const statuses = new Set(errors.map((error) => {
    const problem = renderProblem(error);
    if (problem.status >= 500 || 'Retry-After' in problem.headers) throw new Error(`${problem.body.type} is never stored under a key`);
    return String(problem.status);
  }));
  return applyDecorators(ApiProblems(errors, members), markResponses((status) => statuses.has(status), { [IDEMPOTENT_REPLAYED_HEADER]: REPLAYED_HEADER }));
}

function markResponses(applies: (status: string) => boolean, headers: Record<string, HeaderObject>): MethodDecorator {
  return (_target, _key, descriptor) => {
    const responses: Record<string, ResponseObject> = Reflect.getMetadata(DECORATORS.API_RESPONSE, descriptor.value as object) ?? {};
    const marked = Object.fromEntries(
      Object.entries(responses).map(([status, response]) => [status, applies(status) ? { ...response, headers: { ...response.headers, ...headers } } : response]),
    );
    Reflect.defineMetadata(DECORATORS.API_RESPONSE, marked, descriptor.value as object);
  };
}
