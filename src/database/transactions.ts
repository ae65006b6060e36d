import { Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { type Gate, type GateRow, PendingGate } from './gated-write.js';
import { isDatabaseUnavailable } from './postgres-errors.js';
import { pgPoolOf, type Transaction } from './query-rows.js';

// A transaction waits at most this long for a row lock before failing, instead of queueing forever.
const LOCK_TIMEOUT_MS = 5_000;
// Statements here are single-row or bounded batches; anything slower is a fault to surface.
const STATEMENT_TIMEOUT_MS = 15_000;

// Opens the transaction and bounds it (a simple-protocol batch of constants); SET LOCAL lasts until
// COMMIT or ROLLBACK, so a pooled connection (or PgBouncer) keeps no trace.
const BEGIN = `BEGIN; SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}; SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`;

export type TransactionWork<T> = (db: Transaction) => Promise<T>;

/** COMMIT was answered with ROLLBACK, and no statement's error says why: nothing was written. */
export class TransactionRolledBackError extends Error {
  constructor() {
    super('the transaction was rolled back instead of committed');
  }
}

/**
 * The only place that opens transactions, on the DataSource's node-postgres pool in pipeline mode:
 * `BEGIN` travels with the transaction's first statement and `COMMIT` with its last one, so a
 * transaction of one statement costs one round trip more than the statement alone, not two.
 * `run` commits its own work; `runJoinable` lets a caller higher up the stack (see
 * {@link DeferredCommit}) append statements to the same transaction and decide whether it commits,
 * so that two writes of different modules become visible together. The deferred commit is handed
 * down explicitly (see `JoinableCommit`), not found in an AsyncLocalStorage: on Node 20 that runs
 * promise hooks on every promise of the process.
 */
export class TransactionRunner {
  constructor(private readonly pool: pg.Pool) {}

  async run<T>(work: TransactionWork<T>): Promise<T> {
    const transaction = await OpenTransaction.begin(this.pool);
    return transaction.end(async () => {
      const result = await work(transaction);
      await transaction.commit();
      return result;
    });
  }

  /**
   * A write that commits at once: the work sends exactly one statement, a SELECT (of a function that
   * writes), and waits for it; it runs alone (see {@link runAlone}), one round trip. When `joining`
   * was started with a gate not yet sent (see {@link DeferredCommit.startWith}), the gate goes with
   * it as one statement. A closed gate rejects this with `GateClosedError`: the write was not made.
   */
  async runFirst<T>(work: TransactionWork<T>, joining: DeferredCommit | undefined): Promise<T> {
    if (joining?.hasUnsentGate) return joining.commitGatedWith(work);
    return runAlone(this.pool, work);
  }

  /** Like `run`, unless `joining` is an open deferred commit: then the work joins its transaction. */
  async runJoinable<T>(work: TransactionWork<T>, joining: DeferredCommit | undefined): Promise<T> {
    return joining?.isOpen ? joining.join(work) : this.run(work);
  }

  /** Until it is committed or rolled back, `runJoinable` calls given it join its transaction. */
  openDeferredCommit(): DeferredCommit {
    return new DeferredCommit(this.pool);
  }
}

/** Transactions on the API's pool (the DataSource's); background work with a pool of its own makes a {@link TransactionRunner}. */
@Injectable()
export class Transactions extends TransactionRunner {
  constructor(dataSource: DataSource) {
    super(pgPoolOf(dataSource));
  }
}

/**
 * One transaction shared by every `runJoinable` of a request while it is open. It begins lazily,
 * so no connection is held while the work waits on something else (a payment gateway), and ends
 * with exactly one of `commitWith` or `rollback`.
 */
export class DeferredCommit {
  private transaction: OpenTransaction | undefined;
  private open = true;
  private gate: PendingGate | undefined;

  constructor(private readonly pool: pg.Pool) {}

  get isOpen(): boolean {
    return this.open;
  }

  /** True from `startWith` until a write sends the gate (`runFirst`); still true after a rollback that came first. */
  get hasUnsentGate(): boolean {
    return this.gate?.sent === false;
  }

  /**
   * Starts with `gate`, which goes out with the first write (`runFirst`), as one statement with it,
   * and commits or rolls back with it. Returns the gate's row once a write has sent it (undefined if
   * that statement failed, or if none did); {@link gatePassed} tells how it ended.
   */
  startWith(gate: Gate): { gateRow: Promise<GateRow | undefined> } {
    this.gate = new PendingGate(gate);
    return { gateRow: this.gate.answered };
  }

  /** True once the gate was open and its write committed; false otherwise, once that is known. */
  get gatePassed(): Promise<boolean> {
    if (!this.gate) throw new Error('gatePassed: the commit was not started with a gate');
    return this.gate.passed;
  }

  /** `runFirst` on this commit: the gate with `work`'s one statement, alone, in one round trip. */
  async commitGatedWith<T>(work: TransactionWork<T>): Promise<T> {
    return this.endingGate(runAlone(this.pool, work, this.gate));
  }

  async join<T>(work: TransactionWork<T>): Promise<T> {
    // Joined, the gate's write would stay uncommitted until the end of the request: runFirst commits it.
    if (this.hasUnsentGate) throw new Error('a deferred commit started with a gate takes its first write through runFirst');
    this.transaction ??= await OpenTransaction.begin(this.pool);
    try {
      return await work(this.transaction);
    } catch (error) {
      await this.rollback();
      throw error;
    }
  }

  /**
   * Runs `last` in the shared transaction (or a new one if nothing joined) and commits both. `last`
   * sends exactly one statement, and COMMIT goes right behind it without waiting for its answer:
   * a statement that must decide whether the transaction commits raises an error when it does not
   * apply, so that PostgreSQL answers the COMMIT with ROLLBACK. Rejects with the statement's error,
   * or {@link TransactionRolledBackError}, whenever the COMMIT did not commit.
   */
  async commitWith<T>(last: TransactionWork<T>): Promise<T> {
    if (this.hasUnsentGate) throw new Error('a deferred commit started with a gate takes its first write through runFirst');
    this.open = false;
    const transaction = this.transaction ?? (await OpenTransaction.begin(this.pool));
    this.transaction = undefined;
    return transaction.end(() => transaction.commitAfter(last));
  }

  async rollback(): Promise<void> {
    this.open = false;
    const transaction = this.transaction;
    this.transaction = undefined;
    await transaction?.abandon();
    this.gate?.end(false);
  }

  /** `committing` ends the gate's transaction: the gate passed if it committed. */
  private async endingGate<T>(committing: Promise<T>): Promise<T> {
    try {
      const result = await committing;
      this.gate?.end(true);
      return result;
    } catch (error) {
      this.gate?.end(false);
      throw error;
    }
  }
}

/**
 * A pooled connection inside BEGIN … COMMIT/ROLLBACK, in pipeline mode. Nothing goes out until
 * somebody waits for an answer (a `query`, COMMIT or ROLLBACK): BEGIN and every statement `send`
 * queued wait in the corked socket, so a transaction whose statements nobody reads before COMMIT
 * (BEGIN, writes, COMMIT) is one write and one round trip, and PostgreSQL is woken once for it.
 * The first statement that fails is the transaction's error: COMMIT rejects with it.
 */
class OpenTransaction implements Transaction {
  private corked = true;
  private failure: unknown;
  // How PostgreSQL answered COMMIT: with COMMIT or ROLLBACK the transaction is over, and so is the
  // connection's usefulness after an error on it.
  private commitAnswer: 'none' | 'answered' | 'failed' = 'none';

  private constructor(
    private readonly client: pg.PoolClient,
    private readonly begun: Promise<unknown>,
  ) {}

  static async begin(pool: pg.Pool): Promise<OpenTransaction> {
    const client = await pool.connect();
    socketOf(client).cork();
    const begun = client.query(BEGIN);
    // Awaited by the commit; a BEGIN that fails takes the statements queued behind it down too.
    begun.catch(() => undefined);
    return new OpenTransaction(client, begun);
  }

  query(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    const answer = this.issue(text, values);
    this.flush();
    return answer;
  }

  send(text: string, values?: unknown[]): void {
    this.issue(text, values);
  }

  async commit(): Promise<void> {
    const committing = this.issueCommit();
    this.flush();
    await this.begun;
    this.assertCommitted(await committing);
  }

  /** Runs `last`, whose one statement is followed by COMMIT in the same round trip. */
  async commitAfter<T>(last: TransactionWork<T>): Promise<T> {
    let committing: Promise<pg.QueryResult> | undefined;
    const once: Transaction = {
      query: (text: string, values?: unknown[]) => {
        if (committing) throw new Error('commitWith: the last work sent a second statement after COMMIT');
        const answer = this.issue(text, values);
        committing = this.issueCommit();
        this.flush();
        return answer;
      },
      send: () => {
        throw new Error('commitWith: the last work must wait for its statement');
      },
    };
    let result: T;
    try {
      result = await last(once);
    } catch (error) {
      // The COMMIT behind a failed statement is answered with ROLLBACK; wait for it before rolling back.
      await committing?.catch(() => undefined);
      throw this.failure ?? error;
    }
    if (!committing) throw new Error('commitWith: the last work sent no statement');
    await this.begun;
    this.assertCommitted(await committing);
    return result;
  }

  /** Runs `work` (which ends in a commit) and releases the connection; rolls back first if it fails. */
  async end<T>(work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (error) {
      await this.abandon(error);
      throw error;
    }
    this.release();
    return result;
  }

  /**
   * Rolls back and releases. A connection whose ROLLBACK failed may still be inside the transaction,
   * so it is destroyed instead of being handed to the next one; so is one that failed because its
   * server is unavailable (`cause`): after a failover it may lead to a standby that can't write.
   * After a COMMIT answered with ROLLBACK there is no transaction left: the connection goes back
   * without another round trip (a COMMIT that failed takes its connection with it).
   */
  async abandon(cause?: unknown): Promise<void> {
    if (this.commitAnswer !== 'none') {
      this.release(this.commitAnswer === 'failed' || isDatabaseUnavailable(cause) ? new Error('the COMMIT failed', { cause }) : undefined);
      return;
    }
    try {
      await this.query('ROLLBACK');
      this.release(isDatabaseUnavailable(cause) ? (cause as Error) : undefined);
    } catch (error) {
      this.release(error as Error);
    }
  }

  private issueCommit(): Promise<pg.QueryResult> {
    const committing = this.issue('COMMIT');
    committing.then(
      () => (this.commitAnswer = 'answered'),
      () => (this.commitAnswer = 'failed'),
    );
    return committing;
  }

  private issue(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    const answer = this.client.query(text, values);
    // Also makes an answer nobody awaits (`send`) a handled rejection.
    answer.catch((error: unknown) => void (this.failure ??= error));
    return answer;
  }

  /** Writes what waits in the socket, and keeps buffering what comes next. */
  private flush(): void {
    const socket = socketOf(this.client);
    if (this.corked) socket.uncork();
    socket.cork();
    this.corked = true;
  }

  /** The next user of the connection writes straight through. */
  private release(error?: Error): void {
    if (this.corked) socketOf(this.client).uncork();
    this.corked = false;
    this.client.release(error);
  }

  private assertCommitted(result: pg.QueryResult): void {
    if (result.command !== 'COMMIT') throw this.failure ?? new TransactionRolledBackError();
  }
}

/**
 * `work`'s one statement on its own, in the transaction PostgreSQL makes for a statement sent outside
 * one: it commits when the statement succeeds and leaves nothing of it when it fails, with no BEGIN
 * and COMMIT to send and parse (two of a first payment's statements, about 3% of its CPU). No
 * SET LOCAL can go before it there, so the statement bounds its own lock waits (see
 * {@link boundedAlone}); `statement_timeout` can't be: PostgreSQL arms it as a statement starts.
 * Behind `gate` when given (see {@link DeferredCommit.startWith}).
 */
async function runAlone<T>(pool: pg.Pool, work: TransactionWork<T>, gate?: PendingGate): Promise<T> {
  const client = await pool.connect();
  let issued: Promise<pg.QueryResult> | undefined;
  const alone: Transaction = {
    query: (text: string, values?: unknown[]) => {
      if (issued) throw new Error('runFirst: the work sent a second statement');
      const issue = (statement: string, statementValues?: unknown[]) => (issued = client.query(boundedAlone(statement), statementValues));
      return gate ? gate.send(issue, text, values) : issue(text, values);
    },
    send: () => {
      throw new Error('runFirst: the work must wait for its statement');
    },
  };
  try {
    const result = await work(alone);
    if (!issued) throw new Error('runFirst: the work sent no statement');
    client.release();
    return result;
  } catch (error) {
    // Answered before the connection goes back, so that its next user doesn't wait behind it.
    await issued?.catch(() => undefined);
    client.release(isDatabaseUnavailable(error) ? (error as Error) : undefined);
    throw error;
  }
}

/**
 * A SELECT that sets its own `lock_timeout` (until it ends) before any of it runs: the setting is a
 * one-time filter above the statement (an InitPlan), so PostgreSQL evaluates it first, and every
 * lock taken below it, a table's as a row's, is taken by the functions the statement calls.
 */
function boundedAlone(text: string): string {
  return `SELECT bounded.* FROM (${text}) AS bounded WHERE (SELECT set_config('lock_timeout', '${LOCK_TIMEOUT_MS}', true) IS NOT NULL)`;
}

// node-postgres' socket to the server: `Client#connection.stream` (PoolClient's types leave it out).
function socketOf(client: pg.PoolClient): pg.Client['connection']['stream'] {
  return (client as unknown as pg.Client).connection.stream;
}
