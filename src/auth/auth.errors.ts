import { HttpStatus } from '@nestjs/common';
import { ProblemException } from '../problems/problem.js';

export class UnauthenticatedError extends ProblemException {
  constructor() {
    super(
      { slug: 'unauthenticated', title: 'Missing or invalid credentials', status: HttpStatus.UNAUTHORIZED },
      'Send "Authorization: Bearer <token>" with the API token issued to your client.',
      {},
      { 'WWW-Authenticate': 'Bearer realm="pagos"' },
    );
  }
}
