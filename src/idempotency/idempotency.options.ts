import type { ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

export interface IdempotencyOptions {
  /** How long a key is remembered after its first use. */
  readonly ttlSeconds: number;
  /** How long a claim's owner may go without renewing before a retry may take the claim over. */
  readonly lockTimeoutSeconds: number;
  /** When the purge job runs (cron syntax with seconds). */
  readonly purgeCron: string;
  /** Rows deleted per purge statement. */
  readonly purgeBatchSize: number;
  /** Whose key this is: keys are unique per scope (typically the authenticated client). */
  readonly scopeOf: (request: Request) => string;
  /** Rejects an invalid request before its key is claimed, so the rejection is not stored. */
  readonly validateRequest?: (context: ExecutionContext) => Promise<void>;
}
