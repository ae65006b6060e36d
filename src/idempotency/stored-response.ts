import type { HttpException } from '@nestjs/common';
import { PROBLEM_CONTENT_TYPE_UTF8, ProblemException, renderProblem } from '../problems/problem.js';
import type { StoredResponse } from './idempotency.types.js';

// With the charset spelled out, Fastify sends these exactly as stored.
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The answer a route gave with `value` as its JSON body, as it is stored and replayed. The
 * interceptor stores handlers' answers through this, and so must anything that completes a key on a
 * route's behalf (a job settling an abandoned operation), so that both give the same bytes.
 * `headers`: lower-case names, from REPLAYED_RESPONSE_HEADERS.
 */
export function storedJson(status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): StoredResponse {
  return { status, headers: { ...headers, 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(value) ?? '' };
}

/** The problem+json answer of an expected failure (4xx), as it is stored and replayed. */
export function storedProblem(error: HttpException, headers: Readonly<Record<string, string>> = {}): StoredResponse {
  const problem = renderProblem(error);
  return { status: problem.status, headers: { ...headers, 'content-type': PROBLEM_CONTENT_TYPE_UTF8 }, body: JSON.stringify(problem.body) };
}

/**
 * A client error that tells the client to come back later (`Retry-After`: another operation holds
 * what this one needs) describes a passing state, not this request's result. Like Stripe, it is not
 * stored: the key is released, and a retry with it runs again.
 */
export function isTransientClientError(error: HttpException): boolean {
  return error instanceof ProblemException && Object.keys(error.headers).some((name) => name.toLowerCase() === 'retry-after');
}
