import type pg from 'pg';

/**
 * A statement that decides whether a transaction's first write happens (an idempotency key's claim),
 * sent as one statement with that write (see {@link gatedStatement}).
 */
export interface Gate {
  /** Returns one row; its parameters are $1…$n. */
  readonly text: string;
  readonly values: readonly unknown[];
  /** The boolean column of that row that lets the write run. */
  readonly opensOn: string;
}

export type GateRow = Record<string, unknown>;

/** The gate was closed: the write was not made, and nothing else was written. */
export class GateClosedError extends Error {
  constructor() {
    super('the gate of this write was closed: the write was not made');
  }
}

const GATE_COLUMN = '__gate';
const WRITTEN_COLUMN = '__written';

/**
 * The gate and the write as one statement. The gate runs first (a MATERIALIZED CTE); the write runs
 * only when the gate's `opensOn` column is true: that test is an InitPlan, so PostgreSQL puts a
 * one-time filter above the write and never calls its functions otherwise. A closed gate is no
 * error: no aborted transaction, no line in the server's log. The write must be a SELECT (of a
 * function, for a write); its parameters are renumbered after the gate's.
 */
export function gatedStatement(gate: Gate, text: string, values: readonly unknown[] = []): { text: string; values: unknown[] } {
  if (!/^\s*SELECT\b/i.test(text)) throw new Error(`a gated write must be a SELECT (of a function that writes): ${text.trim().slice(0, 60)}`);
  const shifted = text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + gate.values.length}`);
  return {
    text: `
      WITH gate AS MATERIALIZED (${gate.text}),
           written AS MATERIALIZED (
             SELECT true AS "${WRITTEN_COLUMN}", w.* FROM (${shifted}) AS w WHERE (SELECT "${gate.opensOn}" FROM gate))
      SELECT to_jsonb(gate) AS "${GATE_COLUMN}", written.* FROM gate LEFT JOIN written ON true`,
    values: [...gate.values, ...values],
  };
}

/** A gated statement's answer: the gate's row, and the write's answer when the gate was open. */
export function splitGated(gate: Gate, result: pg.QueryResult): { gateRow: GateRow | undefined; written: pg.QueryResult | undefined } {
  const gateRow = result.rows[0]?.[GATE_COLUMN] as GateRow | undefined;
  if (gateRow?.[gate.opensOn] !== true) return { gateRow, written: undefined };
  const rows = result.rows
    .filter((row) => row[WRITTEN_COLUMN] !== null)
    .map(({ [GATE_COLUMN]: _gate, [WRITTEN_COLUMN]: _written, ...row }) => row);
  const fields = result.fields.filter((field) => field.name !== GATE_COLUMN && field.name !== WRITTEN_COLUMN);
  return { gateRow, written: { ...result, rows, rowCount: rows.length, fields } };
}

/**
 * A gate a deferred commit was started with: whether a write has sent it, its row once answered
 * (undefined if the statement failed or was never sent), and whether it passed: open, and committed.
 */
export class PendingGate {
  sent = false;
  private readonly row = Promise.withResolvers<GateRow | undefined>();
  private readonly outcome = Promise.withResolvers<boolean>();

  constructor(private readonly gate: Gate) {}

  get answered(): Promise<GateRow | undefined> {
    return this.row.promise;
  }

  get passed(): Promise<boolean> {
    return this.outcome.promise;
  }

  /** Sends `text` behind the gate through `issue`; rejects with {@link GateClosedError} when the gate was closed. */
  async send(issue: (text: string, values: unknown[]) => Promise<pg.QueryResult>, text: string, values?: unknown[]): Promise<pg.QueryResult> {
    this.sent = true;
    const statement = gatedStatement(this.gate, text, values);
    let result: pg.QueryResult;
    try {
      result = await issue(statement.text, statement.values);
    } catch (error) {
      this.row.resolve(undefined);
      throw error;
    }
    const { gateRow, written } = splitGated(this.gate, result);
    this.row.resolve(gateRow);
    if (!written) throw new GateClosedError();
    return written;
  }

  end(committed: boolean): void {
    this.row.resolve(undefined);
    this.outcome.resolve(committed);
  }
}
