import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PROBLEM_TYPE_BASE, type ProblemDocument } from '../problems/problem.js';

/**
 * The OpenAPI schema of every error body (RFC 9457). `implements` keeps it in step with the
 * `ProblemDocument` the filter writes; modules document their own extension members with `allOf`.
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

  @ApiPropertyOptional({ type: [String], description: 'Only on `validation-failed`: every reason the request is invalid.', example: ['monto must be an integer amount in minor units (e.g. 1999 for 19.99)'] })
  readonly errors?: readonly string[];
}
