import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import type { HistoryRecord } from './history.js';

/** The history as it happens: kept in memory for the checker and appended, a line each, to the file. */
export class Recorder {
  readonly records: HistoryRecord[] = [];
  private nextOp = 1;
  private readonly file: WriteStream;

  constructor(file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.file = createWriteStream(file);
  }

  add(record: HistoryRecord): void {
    this.records.push(record);
    this.file.write(`${JSON.stringify(record)}\n`);
  }

  fault(kind: string, detail?: string): void {
    this.add({ t: 'fault', at: Date.now(), kind, ...(detail !== undefined && { detail }) });
  }

  newOp(): number {
    return this.nextOp++;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.file.end(resolve));
  }
}

export interface Answer {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly body: string;
  readonly json: unknown;
}

/**
 * One HTTP request on a connection of its own (so the dropping proxy decides per request), bounded
 * by `timeoutMs`; resolves undefined when no answer arrived: the connection dropped or the time ran out.
 */
export function send(url: string, method: 'GET' | 'POST', headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    const outgoing = request(url, { method, headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) }, agent: false, timeout: timeoutMs });
    const timer = setTimeout(() => outgoing.destroy(new Error('timeout')), timeoutMs);
    outgoing.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    outgoing.on('response', (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', () => resolve(undefined));
      incoming.on('aborted', () => resolve(undefined));
      incoming.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const status = incoming.statusCode!;
        resolve({ status, body: text, json, headers: { get: (name) => (incoming.headers[name.toLowerCase()] as string | undefined) ?? null } });
      });
    });
    outgoing.end(body);
  });
}
