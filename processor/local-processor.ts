import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { ConnectionRefusal } from './connection-refusal.js';
import { FaultInjector } from './faults.js';
import { buildServer } from './http-server.js';
import { holdInstanceLock, type InstanceLiveness } from './instance-liveness.js';
import { createSchemaIfMissing } from './schema.js';

/**
 * A local Stripe-compatible payment processor: the subset of Stripe's v1 API that `pagos` uses
 * (PaymentIntents, Refunds, idempotency keys), spoken over HTTP so that the official `stripe` SDK
 * works against it unchanged. All state lives in PostgreSQL (schema `procesador_local`), so it
 * survives restarts and several instances on one database behave as one processor.
 */
export interface LocalProcessorOptions {
  databaseUrl: string;
  /**
   * A connection to PostgreSQL itself (not a transaction-mode pooler) for the session lock that
   * tells other instances this one is alive (instance-liveness.ts); default `databaseUrl`.
   */
  sessionDatabaseUrl?: string;
  /** Default 127.0.0.1: a development stand-in never listens beyond the machine unless asked. */
  host?: string;
  /** Default 0: an ephemeral port, read back from `url`/`port`. */
  port?: number;
  /** How long confirm and refund creation take (half before the work, half after); default 0. */
  latencyMs?: number;
  /** Enables the `/_faults` API for tests; default false (those routes are then 404). */
  faultInjection?: boolean;
  /** Where the processor reports unexpected errors; default: nowhere. */
  log?: (line: string) => void;
}

export interface LocalProcessor {
  /** e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening, ends open connections and the database pool. */
  close(): Promise<void>;
}

// A development stand-in: a request holds a connection only for its statements (never through its latency).
const POOL_SIZE = 5;

/**
 * Creates the schema if missing, opens the pool and resolves once listening.
 *
 * @example
 * const processor = await startLocalProcessor({ databaseUrl: process.env.DATABASE_URL! });
 * const { hostname, port } = new URL(processor.url);
 * const stripe = new Stripe('sk_test_x', { host: hostname, port, protocol: 'http' });
 */
export async function startLocalProcessor(options: LocalProcessorOptions): Promise<LocalProcessor> {
  const log = options.log ?? (() => undefined);
  const host = options.host ?? '127.0.0.1';
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: POOL_SIZE });
  // An idle connection dropped by the server (restart, failover) must not crash the process.
  pool.on('error', (error) => log(`idle database connection lost: ${error.message}`));
  let refusal: ConnectionRefusal | undefined;
  let liveness: InstanceLiveness | undefined;
  try {
    await createSchemaIfMissing(pool);
    liveness = await holdInstanceLock(options.sessionDatabaseUrl ?? options.databaseUrl, log);
    const app = await buildServer({
      context: { pool, instance: liveness.instance, faults: new FaultInjector(), latencyMs: options.latencyMs ?? 0, log },
      faultInjection: options.faultInjection ?? false,
      refuseConnections: (ms) => refusal?.refuseFor(ms),
    });
    await app.listen({ host, port: options.port ?? 0 });
    const { port } = app.server.address() as AddressInfo;
    refusal = new ConnectionRefusal(app.server, host, port, log);
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return {
      url,
      port,
      close: async () => {
        refusal!.stop();
        await app.close();
        await pool.end();
        await liveness!.close();
      },
    };
  } catch (error) {
    await liveness?.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw error;
  }
}
