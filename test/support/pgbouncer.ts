import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

const START_ATTEMPTS = 200;
// PgBouncer refuses to run as root; as root it is started with `-u` as the owner of PostgreSQL's files.
const UNPRIVILEGED_USER = 'postgres';

export interface PgBouncerOptions {
  /** Server connections per database and user: fewer than the replicas' pools, so that they share them. */
  readonly poolSize: number;
}

/**
 * Debian's `pgbouncer` (`.ci/run` installs it) in transaction-pooling mode on a free loopback port,
 * in front of the PostgreSQL server of `serverUrl`, with a generated ini in a temp dir. Clients are
 * trusted, as the machine's PostgreSQL trusts loopback; PgBouncer logs in to the server with the
 * credentials of `serverUrl`. `stop()` ends it and deletes the temp dir.
 */
export class PgBouncer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly user: string,
    readonly port: number,
    private readonly output: () => string,
  ) {}

  static async start(serverUrl: string, options: PgBouncerOptions): Promise<PgBouncer> {
    if (spawnSync('pgbouncer', ['--version']).error) throw new Error('pgbouncer is not installed: apt-get install -y pgbouncer (.ci/run does)');
    const server = new URL(serverUrl);
    const user = decodeURIComponent(server.username) || 'postgres';
    const port = await freePort();
    const dir = await mkdtemp(path.join(tmpdir(), 'pagos-pgbouncer-'));
    // Readable by the unprivileged user PgBouncer switches to.
    await chmod(dir, 0o755);
    await writeFile(path.join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
    await writeFile(path.join(dir, 'pgbouncer.ini'), ini({ server, user, port, dir, poolSize: options.poolSize }), { mode: 0o644 });

    const asUser = process.getuid?.() === 0 ? ['-u', UNPRIVILEGED_USER] : [];
    const child = spawn('pgbouncer', [...asUser, path.join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const bouncer = new PgBouncer(child, dir, user, port, () => output);
    await bouncer.waitUntilAccepting();
    return bouncer;
  }

  /** `databaseUrl` with PgBouncer's host and port: the same database, user and password through the pool. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** Runs a command on PgBouncer's admin console (`SHOW POOLS`, `SHOW STATS`, …) and returns its rows. */
  async admin(command: string): Promise<Record<string, any>[]> {
    const client = new pg.Client({ host: '127.0.0.1', port: this.port, user: this.user, database: 'pgbouncer' });
    await client.connect();
    try {
      return (await client.query(command)).rows;
    } finally {
      await client.end();
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = once(this.child, 'exit');
      this.child.kill('SIGTERM');
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  private async waitUntilAccepting(): Promise<void> {
    for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
      if (this.child.exitCode !== null) throw new Error(`pgbouncer exited with ${this.child.exitCode} during start:\n${this.output()}`);
      try {
        await this.admin('SHOW VERSION');
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    this.child.kill('SIGKILL');
    throw new Error(`pgbouncer did not accept connections after ${START_ATTEMPTS} attempts:\n${this.output()}`);
  }
}

function ini(settings: { server: URL; user: string; port: number; dir: string; poolSize: number }): string {
  const { server, user, port, dir, poolSize } = settings;
  const password = decodeURIComponent(server.password);
  const login = `user=${user}` + (password ? ` password=${password}` : '');
  return `[databases]
; Every database name is passed through to the same server.
* = host=${server.hostname} port=${server.port || 5432} ${login}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${path.join(dir, 'userlist.txt')}
admin_users = ${user}
pool_mode = transaction
default_pool_size = ${poolSize}
max_client_conn = 500
`;
}
