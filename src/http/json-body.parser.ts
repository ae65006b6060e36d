import type { IncomingMessage } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MalformedJsonError, MalformedRequestError, PayloadTooLargeError, UnacceptableJsonError, UnsupportedMediaTypeError } from './http.errors.js';

// Payment requests are a few hundred bytes; anything near this is abuse and gets a 413.
export const JSON_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * How much of a body over the limit is read and thrown away before the 413 (a lingering close, as
 * nginx's `lingering_close`): the answer closes the connection, and closing it while the client
 * still sends makes the kernel reset it, which throws away the answer too, unread. A client library
 * writes the whole body before it reads, so the rest of the body is drained first. Past either bound
 * the client is abusive: the 413 goes out at once and the connection closes under it.
 */
export interface DrainBounds {
  /** Bytes of the whole body; a Content-Length over it is refused before reading. */
  readonly bytes: number;
  /** From the moment the body is known to be too large. */
  readonly ms: number;
}

// 32 MB costs milliseconds to discard; 30 s is nginx's `lingering_time`, enough for a few MB on a slow link.
const DRAIN_BOUNDS: DrainBounds = { bytes: 32 * 1024 * 1024, ms: 30_000 };

// No request of this API nests deeper; the limit keeps recursive validators far from the stack's end.
const MAX_DEPTH = 32;
// Prototype names are never data: a handler or a library reading them would get what they shadow.
const RESERVED_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);
const UTF8 = new Set(['utf-8', 'utf8']);

type Decoder = (body: Buffer, limit: number) => Buffer;
const DECODERS: Readonly<Record<string, Decoder>> = {
  identity: (body) => body,
  gzip: (body, limit) => gunzipSync(body, { maxOutputLength: limit }),
  'x-gzip': (body, limit) => gunzipSync(body, { maxOutputLength: limit }),
  deflate: (body, limit) => inflateSync(body, { maxOutputLength: limit }),
  br: (body, limit) => brotliDecompressSync(body, { maxOutputLength: limit }),
};

const RAW_BODY = Symbol('http:rawBody');

/**
 * The body's bytes as received (decompressed), for a route that must check a signature over them
 * (a re-serialised body would not match); undefined when the request had none.
 */
export function rawBodyOf(request: FastifyRequest): Buffer | undefined {
  return (request as FastifyRequest & { [RAW_BODY]?: Buffer })[RAW_BODY];
}

/**
 * The only request bodies this API reads: UTF-8 JSON of at most JSON_BODY_LIMIT_BYTES, once decompressed.
 * Anything else is a problem before any route runs: another type or charset a 415, a bigger body a
 * 413, a body that does not parse a 400, and parsed JSON that validation can't judge safely (nested
 * deeper than MAX_DEPTH, or with keys named after Object.prototype members) a 400 as well.
 * An empty JSON body is `{}`, so that validation says which fields are missing.
 */
export function acceptJsonBodiesOnly(fastify: FastifyInstance, drain: DrainBounds = DRAIN_BOUNDS): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', (request, payload, done) => {
    readBody(request, payload, drain, (error, raw) => {
      if (error) return done(error, undefined);
      try {
        done(null, parseJson(request, raw!));
      } catch (parseError) {
        done(parseError as Error, undefined);
      }
    });
  });
  // Also answers bodies sent without a Content-Type.
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(new UnsupportedMediaTypeError(), undefined));
}

/** What any route reading a body may answer before it runs: for its `@ApiProblems` documentation. */
export const BODY_PROBLEMS: readonly unknown[] = [
  new MalformedJsonError(),
  new MalformedRequestError(),
  new PayloadTooLargeError(JSON_BODY_LIMIT_BYTES),
  new UnsupportedMediaTypeError(),
];

/** Reads the body, at most JSON_BODY_LIMIT_BYTES of it; a bigger one is drained within `drain` and refused. */
function readBody(request: FastifyRequest, payload: IncomingMessage, drain: DrainBounds, done: (error: Error | null, raw?: Buffer) => void): void {
  const tooLarge = (): void => done(new PayloadTooLargeError(JSON_BODY_LIMIT_BYTES));
  const declared = Number(request.headers['content-length']);
  if (declared > drain.bytes) return tooLarge();
  const chunks: Buffer[] = [];
  let received = 0;
  let drainTimer: NodeJS.Timeout | undefined;
  const startDraining = (): void => {
    drainTimer ??= setTimeout(() => finish(tooLarge), drain.ms);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received <= JSON_BODY_LIMIT_BYTES) chunks.push(chunk);
    else if (received > drain.bytes) finish(tooLarge);
    else startDraining();
  };
  const onEnd = (): void => finish(() => (received > JSON_BODY_LIMIT_BYTES ? tooLarge() : done(null, Buffer.concat(chunks))));
  // The client went away mid-body: whatever it sent is not a request.
  const onError = (): void => finish(() => done(new MalformedRequestError()));
  const finish = (then: () => void): void => {
    clearTimeout(drainTimer);
    payload.off('data', onData).off('end', onEnd).off('error', onError);
    then();
  };
  payload.on('data', onData).on('end', onEnd).on('error', onError);
  if (declared > JSON_BODY_LIMIT_BYTES) startDraining();
}

function parseJson(request: FastifyRequest, raw: Buffer): unknown {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && !UTF8.has(charset)) throw new UnsupportedMediaTypeError();
  const bytes = decode(raw, request.headers['content-encoding']);
  (request as FastifyRequest & { [RAW_BODY]?: Buffer })[RAW_BODY] = bytes;
  const text = bytes.toString('utf8');
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new MalformedJsonError();
  }
  const problem = findProblem(body);
  if (problem) throw new UnacceptableJsonError(problem);
  return body;
}

function decode(raw: Buffer, encoding: string | undefined): Buffer {
  const decoder = DECODERS[(encoding ?? 'identity').trim().toLowerCase()];
  if (!decoder) throw new UnsupportedMediaTypeError();
  try {
    return decoder(raw, JSON_BODY_LIMIT_BYTES);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new PayloadTooLargeError(JSON_BODY_LIMIT_BYTES);
    throw new MalformedJsonError();
  }
}

/** Walks iteratively, so a hostile body can't exhaust the stack here either. */
function findProblem(body: unknown): string | undefined {
  const pending: Array<{ value: unknown; depth: number }> = [{ value: body, depth: 0 }];
  while (pending.length > 0) {
    const { value, depth } = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_DEPTH) return `the body nests deeper than ${MAX_DEPTH} levels`;
    for (const key of Object.keys(value)) {
      if (!Array.isArray(value) && RESERVED_KEYS.has(key)) return `the field name "${key}" is not allowed`;
      pending.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1 });
    }
  }
  return undefined;
}
