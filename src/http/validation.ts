import { type ArgumentMetadata, type ExecutionContext, StandardSchemaValidationPipe } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { RequestValidationError } from './http.errors.js';

/**
 * The app's one validation pipe: every `@Body({ schema })` and `@Query({ schema })` is checked against
 * its Standard Schema (zod's strict objects: unknown fields are rejected, nothing is coerced), the
 * same schema the OpenAPI document is generated from. A body that `validateRouteBody` checked before
 * the handler is not checked again: the result is remembered by the body object itself, which nothing
 * replaces or mutates between the two.
 */
class OncePerBodyValidationPipe extends StandardSchemaValidationPipe {
  private readonly validated = new WeakMap<object, { schema: StandardSchemaV1; value: unknown }>();

  constructor() {
    // A defect two checks catch (an integer past 2^53 is unsafe and too large) is listed once.
    super({ exceptionFactory: (issues) => new RequestValidationError([...new Set(issues.map(messageOf))]) });
  }

  override async transform<T>(value: T, metadata: ArgumentMetadata): Promise<T> {
    if (metadata.type === 'body' && !metadata.schema) throw new Error('every @Body() needs a schema: @Body({ schema })');
    if (metadata.type !== 'body' || typeof value !== 'object' || value === null) return super.transform(value, metadata);
    const known = this.validated.get(value);
    if (known && known.schema === metadata.schema) return known.value as T;
    const valid = await super.transform(value, metadata);
    this.validated.set(value, { schema: metadata.schema!, value: valid });
    return valid;
  }
}

/** The one validation pipe instance: the global pipe and the early validation share what it remembers. */
export const VALIDATION_PIPE = Symbol('VALIDATION_PIPE');

export function createValidationPipe(): StandardSchemaValidationPipe {
  return new OncePerBodyValidationPipe();
}

// The schemas' own messages start with the field's name; zod's defaults ("Unrecognized key") get the path.
function messageOf(issue: StandardSchemaV1.Issue): string {
  const path = (issue.path ?? []).map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.');
  return path && !issue.message.startsWith(path) ? `${path}: ${issue.message}` : issue.message;
}

interface RouteArgument {
  readonly data?: string;
  readonly schema?: StandardSchemaV1;
}

/** The `@Body()` arguments of a route handler, read from Nest's metadata once per handler. */
const bodyArgumentsOf = (() => {
  const known = new WeakMap<object, readonly RouteArgument[]>();
  return (context: ExecutionContext) => {
    const handler = context.getHandler();
    let found = known.get(handler);
    if (!found) {
      const routeArgs: Record<string, RouteArgument> = Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ?? {};
      found = Object.entries(routeArgs)
        .filter(([key]) => Number(key.split(':')[0]) === RouteParamtypes.BODY)
        .map(([, argument]) => ({ data: argument.data, schema: argument.schema }));
      known.set(handler, found);
    }
    return found;
  };
})();

/**
 * Validates the route's `@Body()` as its pipe will, but earlier. Nest runs pipes after interceptors;
 * code that must not act on an invalid request (claiming an idempotency key) calls this first.
 */
export async function validateRouteBody(context: ExecutionContext, pipe: StandardSchemaValidationPipe): Promise<void> {
  const body = context.switchToHttp().getRequest<FastifyRequest>().body as Record<string, unknown> | undefined;
  for (const { data, schema } of bodyArgumentsOf(context)) {
    await pipe.transform(data ? body?.[data] : body, { type: 'body', data, schema });
  }
}

/** zod's `error` for a field of the wrong type: missing fields are told apart from wrong ones. */
export function fieldTypeError(field: string, expected: string): (issue: { input?: unknown }) => string {
  return (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be ${expected}`);
}

/**
 * An amount in minor units, from 1 to `maximum`. A whole number past either bound is told that bound,
 * also beyond 2^53, where zod's integer check fails too (JSON's 99999999999999999999 is 1e20).
 */
export function amountInMinorUnits(field: string, maximum: number, example: string) {
  const tooSmall = `${field} must be at least 1`;
  const tooLarge = `${field} must be at most ${maximum}`;
  const notAnAmount = fieldTypeError(field, `an integer amount in minor units (${example})`);
  const isWhole = (input: unknown): input is number =>
    typeof input === 'number' && (Number.isInteger(input) || Math.abs(input) === Infinity);
  return z
    .int({ error: (issue) => (isWhole(issue.input) ? (issue.input < 1 ? tooSmall : tooLarge) : notAnAmount(issue)) })
    .min(1, { error: tooSmall })
    .max(maximum, { error: tooLarge });
}
