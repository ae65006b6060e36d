import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';

// A transaction waits at most this long for a row lock before failing, instead of queueing forever.
const LOCK_TIMEOUT_MS = 5_000;
// Statements here are single-row or bounded batches; anything slower is a fault to surface.
const STATEMENT_TIMEOUT_MS = 15_000;

// Opens the transaction and bounds it in one round trip (a simple-protocol batch of constants);
// SET LOCAL lasts until COMMIT or ROLLBACK, so a pooled connection (or PgBouncer) keeps no trace.
const BEGIN = `BEGIN; SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}; SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`;

export type TransactionWork<T> = (manager: EntityManager) => Promise<T>;

/** Per-request holder; mutable because Nest binds the handler to the async context of the request's start. */
interface RequestScope {
  deferred: DeferredCommit | undefined;
}

/**
 * The only place that opens transactions. `run` commits its own work; `runJoinable` lets a caller
 * higher up the stack (see {@link DeferredCommit}) append statements to the same transaction and
 * decide whether it commits, so that two writes of different modules become visible together.
 * Joining needs the request scope that {@link Transactions.requestScope} opens for every request.
 */
@Injectable()
export class Transactions {
  private readonly scopes = new AsyncLocalStorage<RequestScope>();

  constructor(private readonly dataSource: DataSource) {}

  /** Express middleware: everything the request runs shares one (initially empty) scope. */
  readonly requestScope = (_request: unknown, _response: unknown, next: () => void): void => {
    this.scopes.run({ deferred: undefined }, next);
  };

  async run<T>(work: TransactionWork<T>): Promise<T> {
    return commitAfter(await this.begin(), work);
  }

  /** Like `run`, unless a deferred-commit scope is open: then the work joins that scope's transaction. */
  async runJoinable<T>(work: TransactionWork<T>): Promise<T> {
    const deferred = this.scopes.getStore()?.deferred;
    return deferred ? deferred.join(work) : this.run(work);
  }

  /** Until it is committed or rolled back, `runJoinable` calls of this request join its transaction. */
  openDeferredCommit(): DeferredCommit {
    const scope = this.scopes.getStore();
    if (!scope) throw new Error('no request scope: Transactions.requestScope must run before any deferred commit');
    if (scope.deferred) throw new Error('a deferred commit is already open for this request');
    const deferred = new DeferredCommit(() => this.begin(), () => (scope.deferred = undefined));
    scope.deferred = deferred;
    return deferred;
  }

  private async begin(): Promise<QueryRunner> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.query(BEGIN);
      return runner;
    } catch (error) {
      await rollbackQuietly(runner);
      await runner.release();
      throw error;
    }
  }
}

/**
 * One transaction shared by every `runJoinable` of a request while it is open. It begins lazily,
 * so no connection is held while the work waits on something else (a payment gateway), and ends
 * with exactly one of `commitWith` or `rollback`.
 */
export class DeferredCommit {
  private runner: QueryRunner | undefined;

  constructor(
    private readonly begin: () => Promise<QueryRunner>,
    private readonly close: () => void,
  ) {}

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
    this.close();
    const runner = this.runner ?? (await this.begin());
    this.runner = undefined;
    return commitAfter(runner, last);
  }

  async rollback(): Promise<void> {
    this.close();
    const runner = this.runner;
    this.runner = undefined;
    if (!runner) return;
    await rollbackQuietly(runner);
    await runner.release();
  }
}

/** Runs the work on an open transaction and commits it, or rolls it back; releases the connection either way. */
async function commitAfter<T>(runner: QueryRunner, work: TransactionWork<T>): Promise<T> {
  try {
    const result = await work(runner.manager);
    await runner.query('COMMIT');
    return result;
  } catch (error) {
    await rollbackQuietly(runner);
    throw error;
  } finally {
    await runner.release();
  }
}

// A failed rollback means the connection is gone, and PostgreSQL discards the transaction anyway.
// Without an open transaction ROLLBACK only warns, so it needs no bookkeeping of its own.
async function rollbackQuietly(runner: QueryRunner): Promise<void> {
  try {
    await runner.query('ROLLBACK');
  } catch {
    /* the original error is the one worth reporting */
  }
}
