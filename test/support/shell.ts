import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const DONE = '@@shell-block-done@@';

export interface BlockOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * One bash process that runs blocks of commands one after another, as a person pastes them into
 * one terminal: variables set by a block are there for the next. `set -euo pipefail`: a command that
 * fails or an unset variable ends the shell, and the block that did it rejects with its output.
 * Each block is sourced from a file with stdin from /dev/null, so no command can read the next one.
 */
export class Shell {
  private readonly child: ChildProcess;
  private readonly directory = mkdtempSync(path.join(tmpdir(), 'pagos-shell-'));
  private stdout = '';
  private stderr = '';
  private blocks = 0;

  constructor(env: NodeJS.ProcessEnv, cwd = process.cwd()) {
    this.child = spawn('bash', ['--noprofile', '--norc'], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (chunk) => (this.stdout += chunk));
    this.child.stderr!.on('data', (chunk) => (this.stderr += chunk));
    this.child.stdin!.write('set -euo pipefail\n');
  }

  /** Runs the block in this shell and resolves with what it printed. */
  async run(commands: string): Promise<BlockOutput> {
    const file = path.join(this.directory, `block-${++this.blocks}.sh`);
    writeFileSync(file, `${commands}\n`);
    this.stdout = '';
    this.stderr = '';
    this.child.stdin!.write(`source ${file} < /dev/null\nprintf '\\n${DONE}\\n'; printf '\\n${DONE}\\n' >&2\n`);
    while (!(this.stdout.includes(DONE) && this.stderr.includes(DONE))) {
      if (this.child.exitCode !== null) {
        throw new Error(`the shell exited with ${this.child.exitCode} in:\n${commands}\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const cut = (text: string) => text.slice(0, text.indexOf(`\n${DONE}`));
    return { stdout: cut(this.stdout), stderr: cut(this.stderr) };
  }

  close(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
    rmSync(this.directory, { recursive: true, force: true });
  }
}
