import type { AppProcess } from './app-process.js';
import { type HttpResult, postPago, type PostOptions } from './http.js';
import { sampleOf, scrape } from './metrics.js';
import { waitUntil } from './waiting.js';

/** One sample of the service's /metrics (0 when the series is absent). */
export async function metricOf(app: AppProcess, name: string, labels: Record<string, string> = {}): Promise<number> {
  return sampleOf(await scrape(app.baseUrl), name, labels) ?? 0;
}

/** Resolves once exactly `count` duplicates are waiting in that process (its `idempotency_waiters` gauge). */
export async function waitForWaiters(app: AppProcess, count: number): Promise<void> {
  await waitUntil(async () => (await metricOf(app, 'idempotency_waiters')) === count);
}

/** A duplicate that asks to wait up to `seconds` for the first answer. */
export function postWaiting(baseUrl: string, seconds: number | string, options: PostOptions): Promise<HttpResult> {
  return postPago(baseUrl, { ...options, headers: { ...options.headers, prefer: `wait=${seconds}` } });
}

/** The answer and when it arrived (performance.now()), to report how close two answers came. */
export async function answeredAt(request: Promise<HttpResult>): Promise<{ answer: HttpResult; at: number }> {
  const answer = await request;
  return { answer, at: performance.now() };
}
