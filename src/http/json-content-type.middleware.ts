import type { NextFunction, Request, Response } from 'express';
import { UnsupportedMediaTypeError } from './http.errors.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** Writes accept JSON only: anything else is a 415, not a silently empty body. */
export function requireJsonContentType(request: Request, _response: Response, next: NextFunction): void {
  const hasBody = request.headers['content-length'] !== '0' && (request.headers['content-length'] ?? request.headers['transfer-encoding']) !== undefined;
  if (METHODS_WITH_BODY.has(request.method) && (hasBody || request.headers['content-type']) && !request.is('application/json')) {
    next(new UnsupportedMediaTypeError());
    return;
  }
  next();
}
