import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
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

  readonly middleware = (_request: Request, response: Response, next: NextFunction): void => {
    if (!this.draining) return next();
    // The problem filter writes the answer, as for every other error.
    response.set('Connection', 'close');
    next(new ShuttingDownError());
  };
}
