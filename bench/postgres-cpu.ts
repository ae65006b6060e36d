import { readdirSync } from 'node:fs';
import type pg from 'pg';
import { processStat } from './process-cpu.js';

/** CPU time (user + system, µs) so far of each `postgres` process on this machine, by pid; undefined off Linux. */
export type PostgresCpu = Map<string, number> | undefined;

/**
 * What the `postgres` processes named in `only` (of the server the bench drives, when it runs here:
 * the machine's cluster or the embedded one) used between two readings of `postgresCpu()`: a process
 * new since `before` counts whole, one that exited meanwhile takes its time with it.
 */
export function postgresCpuMicrosBetween(before: PostgresCpu, after: PostgresCpu, only: ReadonlySet<string>): number | undefined {
  if (!before || !after) return undefined;
  let micros = 0;
  for (const [pid, used] of after) if (only.has(pid)) micros += used - (before.get(pid) ?? 0);
  return micros;
}

/**
 * The backends (pids) connected to `db`'s database now, autovacuum workers included, by application
 * name: the processes of other databases on a shared server, and the server's own (WAL writer,
 * checkpointer), are nobody's request.
 */
export async function databaseBackends(db: pg.ClientBase): Promise<Map<string, string>> {
  const { rows } = await db.query<{ pid: number; application_name: string }>(
    'SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database()',
  );
  return new Map(rows.map((row) => [String(row.pid), row.application_name]));
}

export function postgresCpu(): PostgresCpu {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const cpu = new Map<string, number>();
  for (const pid of pids) {
    const stat = processStat(pid);
    if (stat?.command === 'postgres') cpu.set(pid, stat.cpuMicros);
  }
  return cpu;
}
