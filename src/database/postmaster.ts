import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { isRunning } from './embedded-postgres-owner.js';

// A fast shutdown ends sessions and writes a checkpoint: ~0.1 s on a development database.
const STOP_TIMEOUT_MS = 30_000;
const STOP_POLL_MS = 20;

export interface Postmaster {
  readonly pid: number;
  /** The port it listens on, which a cluster started earlier may not share with today's configuration. */
  readonly port: number;
}

/** The postmaster running on `dataDir`, from its postmaster.pid; a lock file left by a killed one is removed. */
export function runningPostmaster(dataDir: string): Postmaster | undefined {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  // Line 1 the PID, line 4 the port (PostgreSQL's LOCK_FILE_LINE_PID and LOCK_FILE_LINE_PORT).
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  if (Number.isInteger(pid) && pid > 0 && isRunning({ pid, startTime: null })) return { pid, port: Number(lines[3]) };
  rmSync(pidFile, { force: true });
  return undefined;
}

/**
 * Stops a postmaster this process did not spawn (an adopted one) as `pg_ctl stop -m fast` does, and
 * without pg_ctl, which refuses to run as root: SIGINT, then wait for it to remove postmaster.pid,
 * its last act. Waiting for the PID to vanish instead can take seconds longer: an orphan's zombie
 * lasts until PID 1 reaps it.
 */
export async function stopPostmaster(pid: number, dataDir: string): Promise<void> {
  signalFastShutdown(pid);
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (existsSync(pidFile) && isRunning({ pid, startTime: null })) {
    if (Date.now() > deadline) throw new Error(`embedded PostgreSQL (PID ${pid}) in ${dataDir} did not stop within ${STOP_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, STOP_POLL_MS));
  }
}

/** PostgreSQL's fast shutdown; synchronous, so that a process 'exit' handler can send it. */
export function signalFastShutdown(pid: number): void {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    // Gone already.
  }
}
