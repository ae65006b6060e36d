import { expect } from '@jest/globals';
import type pg from 'pg';
import type Stripe from 'stripe';
import { type LocalProcessor, type LocalProcessorOptions, startLocalProcessor } from '../../processor/local-processor.js';
import { stripeAt } from './local-processor.js';
import { connect, createTestDatabase } from './test-database.js';

/** The local processor in this process on a database of its own, the SDK pointed at it, and a connection for assertions. */
export interface ProcessorUnderTest {
  readonly processor: LocalProcessor;
  readonly stripe: Stripe;
  readonly db: pg.Client;
  /** Closes all three, and fails the test file if the processor logged anything (it logs only unexpected errors). */
  close(): Promise<void>;
}

export async function startProcessorUnderTest(database: string, options: Omit<LocalProcessorOptions, 'databaseUrl' | 'log'> = {}): Promise<ProcessorUnderTest> {
  const databaseUrl = await createTestDatabase(database);
  const logged: string[] = [];
  const processor = await startLocalProcessor({ ...options, databaseUrl, log: (line) => logged.push(line) });
  const db = await connect(databaseUrl);
  return {
    processor,
    stripe: stripeAt(processor.url),
    db,
    close: async () => {
      await db.end();
      await processor.close();
      expect(logged).toEqual([]);
    },
  };
}
