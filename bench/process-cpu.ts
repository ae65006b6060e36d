import { readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessStat {
  /** The executable's name, as `ps` shows it (`postgres`, `node`). */
  readonly command: string;
  /** CPU time (user + system, µs) the process has used so far. */
  readonly cpuMicros: number;
}

/** What /proc says of process `pid`; undefined when it is gone, or off Linux. */
export function processStat(pid: number | string): ProcessStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm is in parentheses and may hold spaces; the fields after it are space-separated.
  const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { command, cpuMicros: ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_SECOND };
}
