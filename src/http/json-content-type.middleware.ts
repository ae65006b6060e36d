import type { NextFunction, Request, Response } from 'express';
import { UnsupportedMediaTypeError } from './http.errors.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Writes accept JSON only: a body of any other type is a 415, not a silently empty body. A write
 * without a body passes, and validation says what is missing.
 */
export function requireJsonContentType(request: Request, _response: Response, next: NextFunction): void {
  const contentType = request.headers['content-type'];
  const hasBody = (request.headers['content-length'] ?? '0') !== '0' || request.headers['transfer-encoding'] !== undefined;
  if (METHODS_WITH_BODY.has(request.method) && (hasBody || contentType) && !isJson(contentType)) {
    next(new UnsupportedMediaTypeError());
    return;
  }
  next();
}

// Exactly what the JSON body parser reads; anything else would arrive as an empty body.
function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}
