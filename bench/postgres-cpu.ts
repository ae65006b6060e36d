import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system, µs) so far of each `postgres` process on this machine, by pid; undefined off Linux. */
export type PostgresCpu = Map<string, number> | undefined;

/**
 * What the `postgres` processes (the server the bench drives, when it runs here: the machine's
 * cluster or the embedded one) used between two readings of `postgresCpu()`: a process new since
 * `before` counts whole, one that exited meanwhile (an autovacuum worker) takes its time with it.
 */
export function postgresCpuMicrosBetween(before: PostgresCpu, after: PostgresCpu): number | undefined {
  if (!before || !after) return undefined;
  let micros = 0;
  for (const [pid, used] of after) micros += used - (before.get(pid) ?? 0);
  return micros;
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
    const stat = readStat(pid);
    // comm is in parentheses and may hold spaces; the fields after it are space-separated.
    if (!stat?.startsWith(`${pid} (postgres)`)) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    cpu.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_SECOND);
  }
  return cpu;
}

function readStat(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
}
