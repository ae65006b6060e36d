import { randomUUID } from 'node:crypto';
import type { TestClient } from './clients.js';
import { checkAnswer } from './contract.js';

export interface HttpResult {
  readonly status: number;
  readonly headers: Headers;
  /** The body exactly as received. */
  readonly text: string;
  readonly json: any;
}

export interface PagoBody {
  numeroOrden: string;
  monto: number;
  moneda: string;
  token: string;
}

export function nuevoPago(overrides: Partial<PagoBody> = {}): PagoBody {
  return { numeroOrden: `ORD-${randomUUID().slice(0, 8)}`, monto: 1999, moneda: 'EUR', token: 'tok_visa', ...overrides };
}

export interface PostOptions {
  readonly client: TestClient;
  /** Sent as the Idempotency-Key header as is; omit to leave the header out. */
  readonly key?: string;
  readonly body: unknown;
  /** The exact body bytes to send instead of JSON.stringify(body). */
  readonly rawBody?: string | Uint8Array;
  readonly headers?: Record<string, string>;
}

export function postPago(baseUrl: string, options: PostOptions): Promise<HttpResult> {
  return postJson(baseUrl, '/pagos', options);
}

export interface ReembolsoBody {
  monto: number;
  motivo?: string;
}

export function postReembolso(baseUrl: string, pagoId: string, options: PostOptions): Promise<HttpResult> {
  return postJson(baseUrl, `/pagos/${pagoId}/reembolsos`, options);
}

export async function postJson(baseUrl: string, path: string, options: PostOptions): Promise<HttpResult> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.client.token}`,
    'content-type': 'application/json',
    ...(options.key !== undefined && { 'idempotency-key': options.key }),
    ...options.headers,
  };
  return send(`${baseUrl}${path}`, { method: 'POST', headers, body: options.rawBody ?? JSON.stringify(options.body) });
}

export async function get(baseUrl: string, path: string, client?: TestClient, extraHeaders: Record<string, string> = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...extraHeaders, ...(client && { authorization: `Bearer ${client.token}` }) };
  return send(`${baseUrl}${path}`, { headers });
}

/**
 * `fetch`, with the answer checked against the OpenAPI document when it comes from a pagos service
 * (see contract.ts): for tests that need a request the helpers above can't make, and for clients
 * that take a fetch function.
 */
export async function checkedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const response = await fetch(request);
  await checkAnswer(request.url, request.method, await read(response.clone()));
  return response;
}

async function send(url: string, init: RequestInit): Promise<HttpResult> {
  const answer = await read(await fetch(url, init));
  await checkAnswer(url, init.method ?? 'GET', answer);
  return answer;
}

async function read(response: Response): Promise<HttpResult> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
