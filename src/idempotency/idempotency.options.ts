import type { ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/** How duplicates of a key in flight may wait for its answer (`Prefer: wait`). */
export interface WaitingOptions {
  /** The wait without a `Prefer: wait` (0: answer 409 at once). */
  readonly defaultSeconds: number;
  /** The longest wait granted, whatever the client prefers. */
  readonly maxSeconds: number;
  /** Waiters per process; beyond it a duplicate gets 409 at once. */
  readonly maxWaiters: number;
}

export interface IdempotencyOptions {
  /** How long a key is remembered after its first use. */
  readonly ttlSeconds: number;
  /** How long a claim's owner may go without renewing before a retry may take the claim over. */
  readonly lockTimeoutSeconds: number;
  /** When the purge job runs (cron syntax with seconds): it creates partitions ahead and drops expired ones. */
  readonly purgeCron: string;
  /** Whose key this is: keys are unique per scope (typically the authenticated client). */
  readonly scopeOf: (request: FastifyRequest) => string;
  readonly waiting: WaitingOptions;
  /** Completed answers this process replays from memory (see ReplayCache); 0 entries: every replay reads the key. */
  readonly replayCache: { readonly entries: number; readonly seconds: number };
  /** Rejects an invalid request before its key is claimed, so the rejection is not stored. */
  readonly validateRequest?: (context: ExecutionContext) => Promise<void>;
}
