import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { REQUEST_ID_HEADER } from '../logging/request-id.js';
import { MalformedRequestError } from './http.errors.js';
import { PROBLEM_CONTENT_TYPE_UTF8 } from '../problems/problem.js';

const MALFORMED = JSON.stringify(new MalformedRequestError().render().body);

/**
 * Node's HTTP parser rejects some requests (control bytes in headers, bad framing) before any route
 * sees them; Fastify's own answer would be a bare JSON 400. Given to Fastify as its
 * `clientErrorHandler`, this keeps those answers problem+json too, with an `X-Request-Id` as every
 * other answer has (a new one: the request's own could not be read).
 */
export function answerClientErrorWithProblem(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 400 Bad Request\r\n${REQUEST_ID_HEADER}: ${randomUUID()}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE_UTF8}\r\n` +
      `Content-Length: ${Buffer.byteLength(MALFORMED)}\r\nConnection: close\r\n\r\n${MALFORMED}`,
  );
}
