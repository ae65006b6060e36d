import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { asPostgres, giveToPostgres } from './postgres-os-user.js';

const execFileAsync = promisify(execFile);

const BINARIES_ROOT = '/usr/lib/postgresql';

export type ShutdownMode = 'smart' | 'fast' | 'immediate';

/**
 * A throwaway PostgreSQL cluster of its own (initdb in a temp directory, one loopback port), on the
 * machine's PostgreSQL binaries, that a test or the soak may stop and restart as it likes: the
 * machine's shared server is never restarted under anyone. As root, it runs as the OS user
 * `postgres`, as PostgreSQL requires. `immediate` is a crash as far as the data is concerned: no
 * checkpoint, recovery from the WAL on the next start.
 */
export class PostgresCluster {
  private constructor(
    readonly dataDir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  /** The machine's binaries' directory (the newest major), or undefined where PostgreSQL isn't installed. */
  static binaries(): string | undefined {
    if (!existsSync(BINARIES_ROOT)) return undefined;
    const majors = readdirSync(BINARIES_ROOT).filter((name) => existsSync(path.join(BINARIES_ROOT, name, 'bin', 'pg_ctl')));
    const newest = majors.sort((a, b) => Number(b) - Number(a))[0];
    return newest === undefined ? undefined : path.join(BINARIES_ROOT, newest, 'bin');
  }

  static async create(port: number, settings: Record<string, string> = {}): Promise<PostgresCluster> {
    const bin = PostgresCluster.binaries();
    if (bin === undefined) throw new Error(`no PostgreSQL binaries under ${BINARIES_ROOT}`);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'pagos-cluster-'));
    giveToPostgres(dataDir);
    const cluster = new PostgresCluster(dataDir, port, bin);
    await cluster.run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    const conf = Object.entries({ listen_addresses: "'127.0.0.1'", port: String(port), unix_socket_directories: `'${dataDir}'`, ...settings });
    const lines = conf.map(([name, value]) => `${name} = ${value}`).join('\n');
    appendFileSync(path.join(dataDir, 'postgresql.conf'), `${lines}\n`);
    await cluster.start();
    return cluster;
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    await this.run('pg_ctl', ['-D', this.dataDir, '-l', path.join(this.dataDir, 'server.log'), '-w', '-t', '60', 'start']);
  }

  async stop(mode: ShutdownMode = 'fast'): Promise<void> {
    await this.run('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  /** Stops the cluster if it runs and deletes its data directory. */
  async destroy(): Promise<void> {
    if (existsSync(path.join(this.dataDir, 'postmaster.pid'))) await this.stop('immediate');
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  // Asynchronous: a restart must not stall the event loop of the process driving load through it.
  private async run(command: string, args: readonly string[]): Promise<void> {
    const program = path.join(this.bin, command);
    const [file, argv] = asPostgres(program, args);
    try {
      await execFileAsync(file, argv, { cwd: tmpdir() });
    } catch (error) {
      const { stderr, stdout, message } = error as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${path.basename(program)} ${args.join(' ')} failed: ${stderr || stdout || message}`);
    }
  }
}
