import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { isDatabaseUnavailable } from '../database/postgres-errors.js';
import { PROBLEM_CONTENT_TYPE, ProblemException, renderProblem } from './problem.js';
import { DatabaseUnavailableError } from './http.errors.js';

/** Writes every error as application/problem+json; unknown errors are logged once, with their cause. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProblemFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const problem = renderProblem(this.classify(exception));
    if (response.headersSent) return;
    response.status(problem.status).set(problem.headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem.body));
  }

  private classify(exception: unknown): unknown {
    if (exception instanceof HttpException) {
      if (!(exception instanceof ProblemException) && exception.getStatus() >= 500) this.logger.error(exception.message, exception.stack);
      return exception;
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(`database unavailable: ${(exception as Error).message}`);
      return new DatabaseUnavailableError();
    }
    this.logger.error(exception instanceof Error ? exception.message : String(exception), (exception as Error)?.stack);
    return exception;
  }
}
