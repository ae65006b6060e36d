import { execFileSync } from 'node:child_process';
import { chownSync } from 'node:fs';

/** PostgreSQL refuses to run as root: as root, test clusters run as this OS user. */
export const POSTGRES_OS_USER = 'postgres';

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** As root, hands `path` to the postgres OS user; otherwise it is ours already. */
export function giveToPostgres(path: string): void {
  if (!isRoot()) return;
  const id = (flag: string) => Number(execFileSync('id', [flag, POSTGRES_OS_USER], { encoding: 'utf8' }).trim());
  chownSync(path, id('-u'), id('-g'));
}

/** `command args` as the postgres OS user when we are root. */
export function asPostgres(command: string, args: readonly string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', POSTGRES_OS_USER, '--', command, ...args]] : [command, [...args]];
}
