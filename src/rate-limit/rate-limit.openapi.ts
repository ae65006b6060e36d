import { DECORATORS, type HeaderObject, type ResponseObject } from '@nestjs/swagger';

const HEADERS: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': { description: 'Requests this client may send in a window.', schema: { type: 'integer', minimum: 1, example: 100 } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window, this one counted.', schema: { type: 'integer', minimum: 0, example: 99 } },
  'X-RateLimit-Reset': { description: 'Seconds until the current window ends.', schema: { type: 'integer', minimum: 0, example: 1 } },
};

// The limiter runs after authentication and writes its headers only when it lets the request through:
// never on a 401 or on its own 429, and not on answers given before it (a body that did not parse).
const NOT_THROUGH_THE_LIMITER = new Set(['401', '429']);

/**
 * The OpenAPI half of `@RateLimited()`: the `X-RateLimit-*` headers on the answers of a request the
 * limiter let through. Runs after the route's own response decorators (put it above them).
 */
export const ApiRateLimited: MethodDecorator = (_target, _key, descriptor) => {
  const responses: Record<string, ResponseObject> = Reflect.getMetadata(DECORATORS.API_RESPONSE, descriptor.value as object) ?? {};
  const marked = Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      NOT_THROUGH_THE_LIMITER.has(status) ? response : { ...response, headers: { ...response.headers, ...HEADERS } },
    ]),
  );
  Reflect.defineMetadata(DECORATORS.API_RESPONSE, marked, descriptor.value as object);
};
