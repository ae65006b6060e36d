import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../database/postgres-errors.js';
import { PROBLEM_CONTENT_TYPE_UTF8, ProblemException, renderProblem } from '../problems/problem.js';
import { DatabaseUnavailableError } from './http.errors.js';
import { loggedRequestIdOf } from '../logging/request-logger.js';

/** Writes every error as application/problem+json; unknown errors are logged once, with their cause. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProblemFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const problem = renderProblem(this.classify(exception, { id: loggedRequestIdOf(http.getRequest<FastifyRequest>()) }));
    if (reply.sent) return;
    reply.status(problem.status).headers(problem.headers).type(PROBLEM_CONTENT_TYPE_UTF8).send(JSON.stringify(problem.body));
  }

  /** Lines logged here carry the request's id (`req`), as its request line does. */
  private classify(exception: unknown, req: { id: string | undefined }): unknown {
    if (exception instanceof HttpException) {
      if (!(exception instanceof ProblemException) && exception.getStatus() >= 500) this.logger.error({ req, err: exception, msg: exception.message });
      return exception;
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn({ req, msg: `database unavailable: ${(exception as Error).message}` });
      return new DatabaseUnavailableError();
    }
    const err = exception instanceof Error ? exception : new Error(String(exception));
    this.logger.error({ req, err, msg: err.message });
    return exception;
  }
}
