import type { NextFunction, Request, Response } from 'express';
import { UnacceptableJsonError } from './http.errors.js';

// No request of this API nests deeper; the limit keeps recursive validators far from the stack's end.
const MAX_DEPTH = 32;
// class-transformer skips these names, so the whitelist would never see them; they are never data.
const RESERVED_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/**
 * Rejects parsed JSON bodies that validation can't judge safely: nested deeper than MAX_DEPTH, or
 * carrying keys named after Object.prototype members (`__proto__`, `constructor`, ...).
 * Walks iteratively, so a hostile body can't exhaust the stack here either.
 */
export function rejectUnacceptableJson(request: Request, _response: Response, next: NextFunction): void {
  const problem = findProblem(request.body);
  next(problem ? new UnacceptableJsonError(problem) : undefined);
}

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
