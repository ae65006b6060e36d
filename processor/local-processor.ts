import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { ConnectionRefusal } from './connection-refusal.js';
import { FaultInjector } from './faults.js';
import { buildServer } from './http-server.js';
import { holdInstanceLock, type InstanceLiveness } from './instance-liveness.js';
import { createSchemaIfMissing } from './schema.js';
import { WebhookDelivery } from './webhook-delivery.js';
import { endpointProblem, secretProblem, urlProblem } from './webhook-endpoint.js';
import { WebhookFaultInjector } from './webhook-faults.js';

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
  /**
   * Where to send signed events, as Stripe's webhooks do. Without `url`, events wait until
   * `setWebhookUrl` (or `POST /_faults/webhook-endpoint`) names one; without this option, until the
   * fault API sets both.
   */
  webhook?: WebhookOptions;
}

export interface WebhookOptions {
  /** e.g. `http://127.0.0.1:3000/webhooks/stripe`. */
  url?: string;
  /**
   * The endpoint's signing secret, `whsec_…`: the receiver verifies `Stripe-Signature` with it.
   * Required with `url` and for `setWebhookUrl`; may be left out when only the fault API's
   * `POST /_faults/webhook-endpoint` will name the endpoint (with its own secret).
   */
  secret?: string;
  /** The first retry of a failed delivery after this long, doubling; default 1000 (tests use ~100). */
  retryBaseMs?: number;
  /** The longest wait between retries; default 60000. */
  retryMaxMs?: number;
}

export interface LocalProcessor {
  /** e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  readonly port: number;
  /**
   * Points webhook delivery at `url`, signed with `options.webhook.secret` (required); events
   * written before are delivered now. For a service that learns its own port only once listening.
   *
   * @example processor.setWebhookUrl(`http://127.0.0.1:${port}/webhooks/stripe`);
   */
  setWebhookUrl(url: string): void;
  /** Stops webhook delivery and listening, ends open connections and the database pool. */
  close(): Promise<void>;
}

// A development stand-in: a request holds a connection only for its statements (never through its latency).
const POOL_SIZE = 5;
// Stripe's first retry comes within seconds and later ones grow towards an hour; a local stand-in caps them at a minute.
const DEFAULT_RETRY_BASE_MS = 1_000;
const DEFAULT_RETRY_MAX_MS = 60_000;

/**
 * Creates the schema if missing, opens the pool and resolves once listening.
 *
 * @example
 * const processor = await startLocalProcessor({ databaseUrl: process.env.DATABASE_URL! });
 * const { hostname, port } = new URL(processor.url);
 * const stripe = new Stripe('sk_test_x', { host: hostname, port, protocol: 'http' });
 */
export async function startLocalProcessor(options: LocalProcessorOptions): Promise<LocalProcessor> {
  assertWebhookOptions(options.webhook);
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
    const webhookFaults = new WebhookFaultInjector();
    const delivery = new WebhookDelivery({
      pool,
      instance: liveness.instance,
      faults: webhookFaults,
      retryBaseMs: options.webhook?.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
      retryMaxMs: options.webhook?.retryMaxMs ?? DEFAULT_RETRY_MAX_MS,
      log,
    });
    const app = await buildServer({
      context: { pool, instance: liveness.instance, faults: new FaultInjector(), latencyMs: options.latencyMs ?? 0, log },
      faultInjection: options.faultInjection ?? false,
      refuseConnections: (ms) => refusal?.refuseFor(ms),
      webhooks: { faults: webhookFaults, delivery },
    });
    await app.listen({ host, port: options.port ?? 0 });
    const { port } = app.server.address() as AddressInfo;
    refusal = new ConnectionRefusal(app.server, host, port, log);
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const setWebhookUrl = (webhookUrl: string) => {
      const secret = options.webhook?.secret;
      const problem = secret === undefined ? 'setWebhookUrl needs options.webhook.secret' : urlProblem(webhookUrl);
      if (problem) throw new Error(problem);
      delivery.setEndpoint({ url: webhookUrl, secret: secret! });
    };
    if (options.webhook?.url !== undefined) setWebhookUrl(options.webhook.url);
    return {
      url,
      port,
      setWebhookUrl,
      close: async () => {
        refusal!.stop();
        await delivery.stop();
        await app.close();
        await pool.end();
        await liveness!.close();
      },
    };
  } catch (error) {
    // Nothing was delivered yet: the loop only starts with an endpoint, set after listening.
    await liveness?.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw error;
  }
}

function assertWebhookOptions(webhook: WebhookOptions | undefined): void {
  if (webhook === undefined) return;
  const problem = webhook.url === undefined ? webhook.secret !== undefined && secretProblem(webhook.secret) : endpointProblem(webhook.url, webhook.secret);
  if (problem) throw new Error(problem);
  for (const name of ['retryBaseMs', 'retryMaxMs'] as const) {
    const value = webhook[name];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new Error(`webhook.${name} must be a positive integer, got ${value}`);
  }
}
