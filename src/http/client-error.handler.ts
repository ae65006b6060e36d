import type { Socket } from 'node:net';
import { MalformedRequestError } from './http.errors.js';
import { PROBLEM_CONTENT_TYPE_UTF8 } from '../problems/problem.js';

const MALFORMED = JSON.stringify(new MalformedRequestError().render().body);

/**
 * Node's HTTP parser rejects some requests (control bytes in headers, bad framing) before any route
 * sees them; Fastify's own answer would be a bare JSON 400. Given to Fastify as its
 * `clientErrorHandler`, this keeps those answers problem+json too.
 */
export function answerClientErrorWithProblem(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: ${PROBLEM_CONTENT_TYPE_UTF8}\r\n` +
      `Content-Length: ${Buffer.byteLength(MALFORMED)}\r\nConnection: close\r\n\r\n${MALFORMED}`,
  );
}
