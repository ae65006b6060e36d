import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';

// A transaction waits at most this long for a row lock before failing, instead of queueing forever.
const LOCK_TIMEOUT_MS = 5_000;
// Statements here are single-row or bounded batches; anything slower is a fault to surface.
const STATEMENT_TIMEOUT_MS = 15_000;

export type TransactionWork<T> = (manager: EntityManager) => Promise<T>;

/**
 * The only place that opens transactions. `run` commits its own work; `runJoinable` lets a caller
 * higher up the stack (see {@link DeferredCommit}) append statements to the same transaction and
 * decide whether it commits, so that two writes of different modules become visible together.
 */
@Injectable()
export class Transactions {
  private readonly scopes = new AsyncLocalStorage<DeferredCommit>();

  constructor(private readonly dataSource: DataSource) {}

  async run<T>(work: TransactionWork<T>): Promise<T> {
    const runner = await this.begin();
    try {
      const result = await work(runner.manager);
      await runner.commitTransaction();
      return result;
    } catch (error) {
      await rollbackQuietly(runner);
      throw error;
    } finally {
      await runner.release();
    }
  }

  /** Like `run`, unless a deferred-commit scope is open: then the work joins that scope's transaction. */
  async runJoinable<T>(work: TransactionWork<T>): Promise<T> {
    const scope = this.scopes.getStore();
    return scope ? scope.join(work) : this.run(work);
  }

  /** Opens a scope whose joinable transactions commit only when the caller says so. */
  openDeferredCommit(): DeferredCommit {
    return new DeferredCommit(() => this.begin(), this.scopes);
  }

  private async begin(): Promise<QueryRunner> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
      await runner.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
      await runner.query(`SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
      return runner;
    } catch (error) {
      await rollbackQuietly(runner);
      await runner.release();
      throw error;
    }
  }
}

/**
 * One transaction shared by everything that calls `runJoinable` inside `run(...)`. It is opened
 * lazily, so no connection is held while the work waits on something else (a payment gateway),
 * and finished by exactly one of `commitWith` or `rollback`.
 */
export class DeferredCommit {
  private runner: QueryRunner | undefined;

  constructor(
    private readonly begin: () => Promise<QueryRunner>,
    private readonly scopes: AsyncLocalStorage<DeferredCommit>,
  ) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.scopes.run(this, work);
  }

  async join<T>(work: TransactionWork<T>): Promise<T> {
    this.runner ??= await this.begin();
    try {
      return await work(this.runner.manager);
    } catch (error) {
      await this.rollback();
      throw error;
    }
  }

  /** Runs `last` in the shared transaction (or a new one if nothing joined) and commits both. */
  async commitWith<T>(last: TransactionWork<T>): Promise<T> {
    const runner = this.runner ?? (await this.begin());
    this.runner = undefined;
    try {
      const result = await last(runner.manager);
      await runner.commitTransaction();
      return result;
    } catch (error) {
      await rollbackQuietly(runner);
      throw error;
    } finally {
      await runner.release();
    }
  }

  async rollback(): Promise<void> {
    const runner = this.runner;
    this.runner = undefined;
    if (!runner) return;
    await rollbackQuietly(runner);
    await runner.release();
  }
}

// A failed rollback means the connection is gone, and PostgreSQL discards the transaction anyway.
async function rollbackQuietly(runner: QueryRunner): Promise<void> {
  if (!runner.isTransactionActive) return;
  try {
    await runner.rollbackTransaction();
  } catch {
    /* the original error is the one worth reporting */
  }
}
