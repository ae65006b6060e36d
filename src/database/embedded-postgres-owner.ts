import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Which process of ours runs an embedded cluster, written next to its data directory
 * (`.data/pg.owner` for `.data/pg`): the process that started it, or adopted it after its owner died.
 * Only the owner stops the cluster; any other process of ours on the same data directory (the ops
 * CLI, the migration script, a second service) uses it and leaves it running.
 *
 * A process is named by its PID and its start time (field 22 of `/proc/<pid>/stat`), so that a PID
 * reused by an unrelated process after a SIGKILL is not taken for the owner. Without /proc (macOS)
 * the PID alone is compared.
 */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTime: string | null;
}

/** Claimed: this process owns the cluster now (`previous`: the dead owner it replaced, if any). */
export type OwnershipClaim = { readonly claimed: true; readonly previous?: ProcessIdentity } | { readonly claimed: false; readonly owner: ProcessIdentity };

// Each round either claims, finds a live owner, or clears one stale record; a handful covers any race.
const CLAIM_ROUNDS = 5;

export function ownerFileOf(dataDir: string): string {
  return `${dataDir}.owner`;
}

export function thisProcess(): ProcessIdentity {
  return { pid: process.pid, startTime: startTimeOf(process.pid) ?? null };
}

/**
 * Makes this process the owner unless a live process already is. The record is created whole and
 * exclusively (written aside, then hard-linked into place), so two processes never both claim it.
 */
export function claimOwnership(dataDir: string): OwnershipClaim {
  const file = ownerFileOf(dataDir);
  let previous: ProcessIdentity | undefined;
  for (let round = 0; round < CLAIM_ROUNDS; round++) {
    if (createExclusively(file, JSON.stringify(thisProcess()))) return { claimed: true, ...(previous && { previous }) };
    const owner = readOwner(file);
    if (owner && isRunning(owner)) return { claimed: false, owner };
    if (removeStaleRecord(file)) previous = owner ?? previous;
  }
  throw new Error(`could not claim the embedded PostgreSQL in ${dataDir}: ${file} keeps changing`);
}

/** Removes the record if it still names this process (a non-owner never removes it). */
export function releaseOwnership(dataDir: string): void {
  const file = ownerFileOf(dataDir);
  const owner = readOwner(file);
  if (owner && sameProcess(owner, thisProcess())) rmSync(file, { force: true });
}

/** True while the process runs (a zombie, already exited but not yet reaped, does not). */
export function isRunning(identity: ProcessIdentity): boolean {
  if (!isProcessAlive(identity.pid)) return false;
  const startTime = startTimeOf(identity.pid);
  if (startTime === undefined) return false;
  return identity.startTime === null || startTime === null || startTime === identity.startTime;
}

function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.pid === b.pid && a.startTime === b.startTime;
}

function createExclusively(file: string, content: string): boolean {
  const aside = `${file}.${process.pid}.new`;
  writeFileSync(aside, content);
  try {
    linkSync(aside, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(aside, { force: true });
  }
}

function readOwner(file: string): ProcessIdentity | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ProcessIdentity>;
    if (Number.isInteger(parsed.pid) && (typeof parsed.startTime === 'string' || parsed.startTime === null)) {
      return { pid: parsed.pid!, startTime: parsed.startTime };
    }
  } catch {
    // Gone meanwhile, or not ours to read: treated as no owner.
  }
  return undefined;
}

/**
 * Moves the dead owner's record aside (rename: of processes racing here, one wins). Had another
 * process replaced it meanwhile with its own, live record, that record is put back.
 */
function removeStaleRecord(file: string): boolean {
  const aside = `${file}.${process.pid}.stale`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const moved = readOwner(aside);
  const replacedMeanwhile = moved !== undefined && isRunning(moved);
  if (replacedMeanwhile) createExclusively(file, JSON.stringify(moved));
  rmSync(aside, { force: true });
  return !replacedMeanwhile;
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The process's start time in clock ticks since boot; null where /proc is missing (not Linux);
 * undefined when the process is gone or a zombie.
 */
function startTimeOf(pid: number): string | null | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !hasProc()) return null;
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return fields[19] ?? null;
}

function hasProc(): boolean {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}
