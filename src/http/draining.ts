import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ShuttingDownError } from './http.errors.js';

/**
 * Once shutdown begins, requests that are already running finish; new ones that still arrive on
 * open keep-alive connections get a 503 problem with Retry-After, and the connection is closed.
 */
@Injectable()
export class Draining {
  private draining = false;

  start(): void {
    this.draining = true;
  }

  /** Fastify `onRequest` hook; the problem filter writes the answer, as for every other error. */
  readonly onRequest = async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!this.draining) return;
    reply.header('Connection', 'close');
    throw new ShuttingDownError();
  };
}
