import pg from 'pg';
import { freePort } from '../test/support/free-port.js';
import { PostgresCluster } from '../test/support/postgres-cluster.js';

/**
 * Where the soak keeps the service's data. On a cluster of its own (the machine's PostgreSQL
 * binaries), so that the `postgres-restart` fault can crash and restart it under load without touching
 * anyone else's server; where the machine has no binaries, a database on `--database-url` that is
 * never restarted, and the run says so. The processor's data is elsewhere: another company's
 * database doesn't restart with ours.
 */
export interface ServiceDatabase {
  readonly url: string;
  /** Undefined: the fault can't be injected on this machine. */
  readonly cluster: PostgresCluster | undefined;
  /** A clean run's data goes; a failed run's stays as the evidence, and this says where. */
  close(keep: boolean): Promise<string | undefined>;
}

export async function startServiceDatabase(serverUrl: string, name: string): Promise<ServiceDatabase> {
  if (PostgresCluster.binaries() === undefined) {
    console.log('soak: no PostgreSQL binaries under /usr/lib/postgresql; the service shares --database-url and PostgreSQL is never restarted');
    // Beside the processor's database of the same run, on the same server: its own name.
    const shared = `${name}_service`;
    const url = await createDatabase(serverUrl, shared);
    return { url, cluster: undefined, close: async (keep) => (keep ? `database ${shared} on --database-url` : void (await dropDatabase(serverUrl, shared))) };
  }
  const cluster = await PostgresCluster.create(await freePort());
  const url = await createDatabase(cluster.url(), name);
  return {
    url,
    cluster,
    close: async (keep) => {
      if (!keep) return void (await cluster.destroy());
      await cluster.stop('fast');
      return `the cluster in ${cluster.dataDir} (start it with pg_ctl -D ${cluster.dataDir} start; database ${name})`;
    },
  };
}

/** A fresh database on the server; `name` is one the soak made up, never input. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await adminQuery(serverUrl, `DROP DATABASE ${name} WITH (FORCE)`);
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}
