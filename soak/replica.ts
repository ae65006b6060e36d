import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';

const MAIN = path.resolve('dist/src/main.js');
const READY_LINE = 'pagos listening on port';
const START_TIMEOUT_MS = 60_000;

/**
 * One replica of the built service on a fixed port, so that the proxy in front of it finds it again
 * after a SIGKILL and restart. Its output is kept only as a tail, for a start that fails.
 */
export class Replica {
  private child: ChildProcess | undefined;
  private tail = '';
  stopped = false;

  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH, ...this.env, PORT: String(this.port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.stopped = false;
    let ready = false;
    const keep = (chunk: Buffer): void => {
      this.tail = (this.tail + chunk.toString()).slice(-4000);
      if (this.tail.includes(READY_LINE)) ready = true;
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!ready) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`replica on port ${this.port} did not start:\n${this.tail}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    this.tail = '';
  }

  /** Sends `signal` and, for one that ends the process, waits for its exit. */
  async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    if (signal === 'SIGSTOP' || signal === 'SIGCONT') {
      child.kill(signal);
      this.stopped = signal === 'SIGSTOP';
      return;
    }
    const exited = once(child, 'exit');
    if (this.stopped) child.kill('SIGCONT');
    child.kill(signal);
    await exited;
    this.stopped = false;
  }
}
