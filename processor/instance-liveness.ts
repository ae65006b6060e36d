import { randomInt } from 'node:crypto';
import pg from 'pg';

/**
 * Which processor instances are alive, as PostgreSQL sees them: each holds a session advisory lock
 * named after itself, on a connection of its own, for as long as it runs. A claim names the instance
 * that made it; when that instance dies its connection closes, the lock goes with it, and nothing
 * the instance had not committed ever will be. So its claims can be taken over at once, the way a
 * request to Stripe that never finished executing can be sent again — not after a timeout.
 */

// The first half of the two-key advisory lock: this processor's namespace (its other locks use the one-key form).
const INSTANCE_LOCK_CLASS = 7306;

/** SQL: whether the instance in `column` still holds its lock. */
export function INSTANCE_ALIVE(column: string): string {
  return `EXISTS (SELECT 1 FROM pg_locks l
                   WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = ${INSTANCE_LOCK_CLASS}
                     AND l.objid = ${column}::oid AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))`;
}

export interface InstanceLiveness {
  readonly instance: number;
  close(): Promise<void>;
}

/** How the lock's connection names itself in pg_stat_activity. */
export const INSTANCE_LOCK_APPLICATION = 'local-processor-instance';

// How soon a lost lock connection is opened again (the database restarting, a connection terminated).
const RECONNECT_DELAY_MS = 200;

/**
 * Takes this instance's lock on a connection of its own, held until `close`. A lost connection is
 * opened again and the lock taken again; meanwhile this instance's claims look abandoned and may be
 * taken over, which its fenced completions make safe (the work of a claim taken over rolls back).
 */
export async function holdInstanceLock(databaseUrl: string, log: (line: string) => void): Promise<InstanceLiveness> {
  const instance = randomInt(1, 2 ** 31 - 1);
  let closed = false;
  let client = await lockedConnection(databaseUrl, instance);
  const watch = (connection: pg.Client): void => {
    connection.on('error', (error) => {
      if (closed) return;
      log(`instance lock connection lost (${error.message}); taking the lock again`);
      void reconnect();
    });
  };
  const reconnect = async (): Promise<void> => {
    while (!closed) {
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
      try {
        client = await lockedConnection(databaseUrl, instance);
        watch(client);
        return;
      } catch {
        // Still unreachable: try again.
      }
    }
  };
  watch(client);
  return {
    instance,
    close: async () => {
      closed = true;
      await client.end().catch(() => undefined);
    },
  };
}

async function lockedConnection(databaseUrl: string, instance: number): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: INSTANCE_LOCK_APPLICATION });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1::int, $2::int)', [INSTANCE_LOCK_CLASS, instance]);
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}
