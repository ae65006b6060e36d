import { randomUUID } from 'node:crypto';
import { connect as connectSocket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Fastify, { type FastifyInstance } from 'fastify';
import type pg from 'pg';
import { acceptJsonBodiesOnly } from '../../src/http/json-body.parser.js';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { countCharges } from '../support/ledger.js';
import { connect, createTestDatabase } from '../support/test-database.js';

const MB = 1024 * 1024;

interface Upload {
  /** Everything the server sent, as text. */
  readonly answer: string;
  /** The socket error the client saw (EPIPE, ECONNRESET), if any. */
  readonly error?: string;
  /** Whether any answer arrived before the last byte of the body was written. */
  readonly answeredWhileUploading: boolean;
  /** From the first body byte to the connection's close. */
  readonly closedAfterMs: number;
}

interface UploadPlan {
  readonly bytes: number;
  readonly pieceBytes: number;
  /** Between two pieces: a slow sender. */
  readonly pauseMs?: number;
  /** A client library writes the whole body before it reads; a careful client reads while it sends. */
  readonly readWhileSending: boolean;
  /** Without Content-Length, in chunked encoding. */
  readonly chunked?: boolean;
}

/** POSTs a JSON body of `bytes` spaces to /pagos over a bare socket, piece by piece, and collects what happens. */
async function upload(baseUrl: string, plan: UploadPlan): Promise<Upload> {
  const { hostname, port } = new URL(baseUrl);
  const head = [
    'POST /pagos HTTP/1.1', `Host: ${hostname}:${port}`, `Authorization: Bearer ${ALICE.token}`, 'Content-Type: application/json',
    plan.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${plan.bytes}`, `Idempotency-Key: ${randomUUID()}`, 'Connection: close',
  ].join('\r\n');
  const socket = connectSocket(Number(port), hostname);
  const received: Buffer[] = [];
  let uploading = true;
  let answeredWhileUploading = false;
  let error: string | undefined;
  const closed = new Promise<void>((resolve) => {
    socket.on('error', (cause: NodeJS.ErrnoException) => (error ??= cause.code ?? cause.message)).on('close', () => resolve());
  });
  const read = (): void => {
    socket.on('data', (chunk: Buffer) => {
      if (uploading) answeredWhileUploading = true;
      received.push(chunk);
    });
  };
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  if (plan.readWhileSending) read();
  socket.write(`${head}\r\n\r\n`);
  const started = performance.now();
  const piece = Buffer.alloc(plan.pieceBytes, 0x20);
  for (let sent = 0; sent < plan.bytes && error === undefined && !socket.destroyed; sent += piece.length) {
    if (sent > 0 && plan.pauseMs) await new Promise((resolve) => setTimeout(resolve, plan.pauseMs));
    const data = piece.subarray(0, Math.min(piece.length, plan.bytes - sent));
    const framed = plan.chunked ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
    if (sent + data.length >= plan.bytes) uploading = false;
    await new Promise<void>((resolve) => socket.write(framed, () => resolve()));
  }
  uploading = false;
  if (plan.chunked && !socket.destroyed) socket.write('0\r\n\r\n');
  if (!plan.readWhileSending) read();
  await closed;
  return { answer: Buffer.concat(received).toString('utf8'), error, answeredWhileUploading, closedAfterMs: performance.now() - started };
}

// The real app on a loopback port, its body parser with the bounds it ships with, real PostgreSQL.
describe('a body over the 64 kB limit is drained, then answered with its 413 (real app)', () => {
  let app: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('oversized-bodies');
    app = await startAppProcess(url);
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await app?.stop();
  });

  it.each([2, 20])('%i MB written whole before reading, as client libraries do: the 413 problem, no reset, no charge', async (mb) => {
    const charges = await countCharges(db);
    const result = await upload(app.baseUrl, { bytes: mb * MB, pieceBytes: MB, readWhileSending: false });
    expect(result.error).toBeUndefined();
    expect(result.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.answer).toContain('"type":"https://pagos.dev/problems/payload-too-large"');
    expect(await countCharges(db)).toBe(charges);
  });

  it('a slow sender (2 MB in 100 kB pieces, 40 ms apart) is answered after its last byte, not reset in the middle', async () => {
    const result = await upload(app.baseUrl, { bytes: 2 * MB, pieceBytes: 100 * 1024, pauseMs: 40, readWhileSending: true });
    expect(result.error).toBeUndefined();
    expect(result.answeredWhileUploading).toBe(false);
    expect(result.answer).toMatch(/^HTTP\/1\.1 413 /);
  });

  // Past the bound the 413 still goes out, but the close under a sender resets the connection, which
  // usually throws the answer away before the client reads it: what is certain is the cut.
  it('a Content-Length over the 32 MB bound is refused at once and its connection cut', async () => {
    const result = await upload(app.baseUrl, { bytes: 40 * MB, pieceBytes: MB, readWhileSending: true });
    expect(result.error).toMatch(/^(EPIPE|ECONNRESET)$/);
  });

  it('a chunked body past the 32 MB bound has its connection cut: the client sees it closed while sending', async () => {
    const result = await upload(app.baseUrl, { bytes: 48 * MB, pieceBytes: MB, chunked: true, readWhileSending: false });
    expect(result.error).toMatch(/^(EPIPE|ECONNRESET)$/);
    // The cut connections cost the app nothing: it still answers.
    expect((await fetch(`${app.baseUrl}/health/live`)).status).toBe(200);
  });
});

// Real: Fastify with the app's body parser on a loopback port. Not the app: its drain time bound is
// 30 s, so this server gives the parser a short one rather than have the test sleep it out.
describe('the drain time bound (the parser on a bare Fastify, bound 500 ms)', () => {
  const BOUND_MS = 500;
  let server: FastifyInstance;
  let baseUrl: string;

  beforeAll(async () => {
    server = Fastify();
    acceptJsonBodiesOnly(server, { bytes: 32 * MB, ms: BOUND_MS });
    server.post('/pagos', async () => ({ read: true }));
    baseUrl = await server.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('an abusively slow sender (100 kB every 200 ms, 2 MB) has its connection closed at the bound, long before its end', async () => {
    const result = await upload(baseUrl, { bytes: 2 * MB, pieceBytes: 100 * 1024, pauseMs: 200, readWhileSending: true });
    // The 413 goes out at the bound, and the connection closes under the sender.
    expect(result.answeredWhileUploading).toBe(true);
    expect(result.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(BOUND_MS);
    expect(result.closedAfterMs).toBeLessThan(20 * 200);
  });

  it('a slow sender within the bound is answered after its last byte', async () => {
    const result = await upload(baseUrl, { bytes: 200 * 1024, pieceBytes: 50 * 1024, pauseMs: 50, readWhileSending: true });
    expect(result.error).toBeUndefined();
    expect(result.answeredWhileUploading).toBe(false);
    expect(result.answer).toMatch(/^HTTP\/1\.1 413 /);
  });
});
