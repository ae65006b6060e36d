import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, µs) of every `postgres` process on this machine so far, from /proc:
 * the server the bench drives, when it runs here (the machine's cluster or the embedded one).
 * Backends that exit between two readings take their time with them; the pools keep theirs open.
 * Undefined off Linux.
 */
export function postgresCpuMicros(): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  let ticks = 0;
  for (const pid of pids) {
    const stat = readStat(pid);
    // comm is in parentheses and may hold spaces; the fields after it are space-separated.
    if (!stat?.startsWith(`${pid} (postgres)`)) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

function readStat(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
}
