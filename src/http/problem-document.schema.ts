import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PROBLEM_TYPE_BASE, type ProblemDocument } from '../problems/problem.js';

/**
 * The standard members of every error body (RFC 9457). `implements` keeps it in step with the
 * `ProblemDocument` the filter writes; each problem type's own schema builds on it (`problem-schemas.ts`).
 */
@ApiSchema({ name: 'Problem', description: 'An RFC 9457 problem, sent as application/problem+json.' })
export class ProblemDocumentSchema implements ProblemDocument {
  readonly [extension: string]: unknown;

  @ApiProperty({ format: 'uri', description: 'Identifies the kind of problem; stable, safe to switch on.', example: `${PROBLEM_TYPE_BASE}idempotency-key-reused` })
  readonly type!: string;

  @ApiProperty({ description: 'Short summary of the kind of problem.', example: 'Idempotency-Key reused with a different request' })
  readonly title!: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status code.', example: 422 })
  readonly status!: number;

  @ApiProperty({ description: 'What happened in this case and what to do next.' })
  readonly detail!: string;
}

/** The member `validation-failed` adds. */
export class ValidationFailedMembers {
  @ApiProperty({ type: [String], description: 'Every reason the request is invalid.', example: ['monto must be an integer amount in minor units (e.g. 1999 for 19.99)'] })
  readonly errors!: readonly string[];
}
