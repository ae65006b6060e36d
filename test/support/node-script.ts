import { spawn } from 'node:child_process';
import { once } from 'node:events';

export interface ScriptResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `script` on this Node with `args` until it exits; its environment is `env` and the PATH, nothing else of the test's. */
export async function runNodeScript(script: string, args: readonly string[], env: Record<string, string | undefined> = {}): Promise<ScriptResult> {
  const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}
