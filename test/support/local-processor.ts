import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type pg from 'pg';
import Stripe from 'stripe';
import { runNodeScript, type ScriptResult } from './node-script.js';

/** Helpers for driving the local processor with the real `stripe` SDK over real HTTP. */

const MAIN = path.resolve('dist/processor/main.js');
const READY_LINE = 'local processor listening on ';
const START_TIMEOUT_MS = 20_000;

/** The SDK as the service configures it, pointed at `url`; no retries unless a test asks for them. */
export function stripeAt(url: string, config: Partial<Stripe.StripeConfig> = {}): Stripe {
  const { hostname, port } = new URL(url);
  return new Stripe('sk_test_local', { host: hostname, port: Number(port), protocol: 'http', maxNetworkRetries: 0, ...config });
}

export type FaultSpec = {
  operation:
    | 'create_intent'
    | 'confirm_intent'
    | 'retrieve_intent'
    | 'cancel_intent'
    | 'list_intents'
    | 'create_refund'
    | 'retrieve_refund'
    | 'list_refunds'
    | 'retrieve_event'
    | 'list_events'
    | 'authenticate_intent'
    | 'settle_intent'
    | 'settle_refund';
  fault: 'drop_after' | 'error_after' | 'error_before' | 'latency';
  times?: number;
  latencyMs?: number;
};

export async function addFault(url: string, fault: FaultSpec): Promise<void> {
  const response = await fetch(`${url}/_faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fault) });
  if (response.status !== 201) throw new Error(`adding a fault answered ${response.status}: ${await response.text()}`);
}

export async function clearFaults(url: string): Promise<void> {
  await fetch(`${url}/_faults`, { method: 'DELETE' });
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await promise;
  } catch (error) {
    return error as Stripe.errors.StripeError;
  }
  throw new Error('expected the call to fail, and it succeeded');
}

export async function countCharges(db: pg.Client, paymentIntent: string): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM procesador_local.charges WHERE payment_intent = $1', [paymentIntent]);
  return rows[0].n;
}

export async function refundedOf(db: pg.Client, paymentIntent: string): Promise<{ refunds: number; refundedSum: number; amountRefunded: number }> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*)::int FROM procesador_local.refunds WHERE payment_intent = $1) AS refunds,
            (SELECT coalesce(sum(amount), 0)::int FROM procesador_local.refunds WHERE payment_intent = $1) AS refunded_sum,
            (SELECT amount_refunded::int FROM procesador_local.charges WHERE payment_intent = $1) AS amount_refunded`,
    [paymentIntent],
  );
  return { refunds: rows[0].refunds, refundedSum: rows[0].refunded_sum, amountRefunded: rows[0].amount_refunded };
}

/** Polls until `condition` holds (a state another request is about to reach), failing after `timeoutMs`. */
export async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface ProcessorProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The built standalone processor (`dist/processor/main.js`) as its own OS process, on an ephemeral port. */
export async function startProcessorProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ProcessorProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, PROCESSOR_PORT: '0', ...env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!stdout.includes('\n')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the processor did not start: ${stdout}${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const url = stdout.slice(stdout.indexOf(READY_LINE) + READY_LINE.length).trim();
  return {
    url,
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/** Runs the standalone processor with `env` until it exits, for start-up failures. */
export function runProcessorToExit(env: Record<string, string>): Promise<ScriptResult> {
  return runNodeScript(MAIN, [], env);
}

/** A local-only test helper route of the processor, through the SDK's raw request (form-encoded, authenticated). */
export async function testHelper<T = Record<string, unknown>>(stripe: Stripe, path: string, params: Record<string, string>, idempotencyKey?: string): Promise<T> {
  return stripe.rawRequest('POST', `/v1/test_helpers/${path}`, params, idempotencyKey ? { idempotencyKey } : {}) as Promise<T>;
}

export type WebhookFaultSpec = { fault: 'drop' | 'duplicate' | 'reorder' | 'delay'; type?: string; times?: number; delayMs?: number };

export async function addWebhookFault(url: string, fault: WebhookFaultSpec): Promise<void> {
  const response = await fetch(`${url}/_faults/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fault) });
  if (response.status !== 201) throw new Error(`adding a webhook fault answered ${response.status}: ${await response.text()}`);
}

export type WebhookDelivery = { event_id: string; type: string; attempts: number; delivered_at: string | null; last_status: number | null };

export async function webhookDeliveries(url: string): Promise<WebhookDelivery[]> {
  return (await fetch(`${url}/_faults/webhook-deliveries`)).json() as Promise<WebhookDelivery[]>;
}

export interface ReceivedWebhook {
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
  readonly eventId: string;
  readonly type: string;
}

/**
 * A real HTTP endpoint on 127.0.0.1 standing for the service's webhook route: keeps every POST's raw
 * body and headers, and answers 200 unless told otherwise (`answerNextAbout`).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly statuses = new Map<string, number[]>();
  private constructor(private readonly server: http.Server) {}

  static async start(answerDelayMs = 0): Promise<WebhookReceiver> {
    const receiver: WebhookReceiver = new WebhookReceiver(
      http.createServer((request, response) => {
        let body = '';
        request.setEncoding('utf8');
        request.on('data', (chunk: string) => (body += chunk));
        request.on('end', () => {
          const event = JSON.parse(body) as { id: string; type: string; data: { object: { id: string } } };
          receiver.received.push({ body, headers: request.headers, eventId: event.id, type: event.type });
          const status = receiver.statuses.get(event.data.object.id)?.shift() ?? 200;
          setTimeout(() => response.writeHead(status, { 'content-type': 'application/json' }).end('{}'), answerDelayMs);
        });
      }),
    );
    receiver.server.listen(0, '127.0.0.1');
    await once(receiver.server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks/stripe`;
  }

  /** The next POSTs of events about this object (`pi_…`, `re_…`) are answered with these statuses, in order. */
  answerNextAbout(objectId: string, ...statuses: number[]): void {
    this.statuses.set(objectId, [...(this.statuses.get(objectId) ?? []), ...statuses]);
  }

  of(eventId: string): ReceivedWebhook[] {
    return this.received.filter((webhook) => webhook.eventId === eventId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
