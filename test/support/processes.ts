import { readdirSync, readFileSync } from 'node:fs';
import { isRunning as isProcessRunning } from '../../src/database/embedded-postgres-owner.js';

/**
 * The running processes whose command line contains `text` (a data directory names its postmaster:
 * `postgres -D <dir>`), read from /proc. Zombies, exited but not yet reaped, have no command line.
 */
export function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** True while the process runs; false once it exited, reaped or not. */
export function isRunning(pid: number): boolean {
  return isProcessRunning({ pid, startTime: null });
}
