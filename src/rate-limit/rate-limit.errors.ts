import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';

export class RateLimitedError extends ProblemException {
  constructor(retryAfterSeconds: number) {
    super(
      { slug: 'rate-limited', title: 'Too many requests', status: HttpStatus.TOO_MANY_REQUESTS },
      `This client sent too many requests; nothing was done. Retry after ${retryAfterSeconds} second(s), with the same Idempotency-Key.`,
      {},
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}
