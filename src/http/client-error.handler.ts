import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { MalformedRequestError } from './http.errors.js';
import { PROBLEM_CONTENT_TYPE } from './problem.js';

const MALFORMED = JSON.stringify(new MalformedRequestError().render().body);

/**
 * Node's HTTP parser rejects some requests (control bytes in headers, bad framing) before Express
 * sees them, and would answer with a bare 400. This keeps those answers problem+json too.
 */
export function answerMalformedRequestsWithProblems(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(MALFORMED)}\r\nConnection: close\r\n\r\n${MALFORMED}`,
    );
  });
}
