import { HttpException, HttpStatus } from '@nestjs/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER, requestIdOf } from '../logging/request-id.js';
import { PROBLEM_CONTENT_TYPE_UTF8, renderProblem } from '../problems/problem.js';
import { MalformedRequestError } from './http.errors.js';

/**
 * Fastify's router refuses some requests before any hook or route runs: a path that does not
 * percent-decode (`/pagos/%zz`, FST_ERR_BAD_URL) and a path parameter over its length limit
 * (FST_ERR_MAX_PARAM_LENGTH, 414). Given to Fastify as its `frameworkErrors`, this answers them in
 * problem+json as every other answer, with an `X-Request-Id` (the hooks that set it did not run),
 * and never echoes the path Fastify's messages quote.
 */
export function answerFrameworkErrorWithProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const problem = renderProblem(error.code === 'FST_ERR_BAD_URL' ? new MalformedRequestError() : asHttpException(error));
  void reply
    .status(problem.status)
    .headers({ ...problem.headers, [REQUEST_ID_HEADER]: requestIdOf(request.headers[REQUEST_ID_HEADER.toLowerCase()]) })
    .type(PROBLEM_CONTENT_TYPE_UTF8)
    .send(JSON.stringify(problem.body));
}

function asHttpException(error: FastifyError): HttpException {
  const status = error.statusCode ?? HttpStatus.BAD_REQUEST;
  if (status === HttpStatus.URI_TOO_LONG) return new HttpException('A path segment is too long; no id of this API is. Fix the URL and send it again.', status);
  return new HttpException('The request could not be routed. Fix it and send it again.', status);
}
