import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { TEST_API_TOKENS } from './clients.js';
import { checkAnswersOf } from './contract.js';
import { runNodeScript } from './node-script.js';

const MAIN = path.resolve('dist/src/main.js');
// PORT=0 and the port read back from this line: a port chosen beforehand could be taken by
// another test's process before the service binds it (CI saw two replicas started together collide).
const READY_LINE = /pagos listening on port (\d+) /;
const START_TIMEOUT_MS = 30_000;
// Tests send bursts far beyond a client's fair share: 10,000 a second is out of their reach. The
// rate-limit test sets its own limit.
// The embedded processor on any free port: files run in parallel, each with its own service.
const TEST_DEFAULTS = { RATE_LIMIT_REQUESTS: '10000', RATE_LIMIT_WINDOW_SECONDS: '1', LOG_FORMAT: 'json', LOCAL_PROCESSOR_PORT: '0' };

export interface AppProcess {
  readonly baseUrl: string;
  readonly child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends the signal and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  /**
   * Leads a process group of its own, as a shell's job does, and `stop` signals the whole group, as
   * a terminal's Ctrl-C does: whatever the service spawned into its group gets the signal too.
   */
  readonly asTerminalJob?: boolean;
}

/**
 * The built service (`npm test` builds it first) as a separate OS process on a free loopback port.
 * Every answer the test helpers (`http.ts`) get from it is checked against its OpenAPI document.
 * `databaseUrl` undefined: no DATABASE_URL, so the service runs the embedded PostgreSQL (`env`
 * should then name its own EMBEDDED_PG_DATA_DIR and EMBEDDED_PG_PORT).
 */
export async function startAppProcess(
  databaseUrl: string | undefined,
  env: Record<string, string> = {},
  { asTerminalJob = false }: StartOptions = {},
): Promise<AppProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, NODE_ENV: 'test', API_TOKENS: TEST_API_TOKENS, ...TEST_DEFAULTS, ...env, PORT: '0', ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: asTerminalJob,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await waitFor(() => READY_LINE.test(output), child, () => output);
  const baseUrl = `http://127.0.0.1:${READY_LINE.exec(output)![1]}`;
  // Its answers are checked against the OpenAPI document from now on (see contract.ts).
  await checkAnswersOf(baseUrl);
  return {
    baseUrl,
    child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      if (asTerminalJob) process.kill(-child.pid!, signal);
      else child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/** Runs the built service with `env` and resolves with its exit code and output, for start-up failures. */
export async function runAppProcessToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const { code, stderr } = await runNodeScript(MAIN, [], env);
  return { code, stderr };
}

async function waitFor(ready: () => boolean, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!ready()) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode} during start:\n${output()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not start within ${START_TIMEOUT_MS} ms:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Runs `npm run migration:*`'s script (built) against a database and returns what it printed;
 * `databaseUrl` undefined: against the embedded PostgreSQL that `env` names.
 */
export async function runMigrationScript(command: 'run' | 'revert', databaseUrl: string | undefined, env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const { code, stdout, stderr } = await runNodeScript(path.resolve('dist/src/database/migrate.js'), [command], {
    ...env,
    ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }),
  });
  return { code, output: stdout + stderr };
}
