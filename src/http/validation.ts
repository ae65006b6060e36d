import { type ArgumentMetadata, type ExecutionContext, ValidationPipe, type ValidationError } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { FastifyRequest } from 'fastify';
import { RequestValidationError } from './http.errors.js';

/**
 * Remembers the DTO each parsed body became, so that the route's pipe does not validate a body again
 * that `validateRouteBody` validated before the handler (one class-validator pass per request, not two).
 * Keyed by the body object itself: nothing replaces or mutates it between the two.
 */
class OncePerBodyValidationPipe extends ValidationPipe {
  private readonly validated = new WeakMap<object, { metatype: unknown; dto: unknown }>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'body' || typeof value !== 'object' || value === null) return super.transform(value, metadata);
    const known = this.validated.get(value);
    if (known && known.metatype === metadata.metatype) return known.dto;
    const dto: unknown = await super.transform(value, metadata);
    this.validated.set(value, { metatype: metadata.metatype, dto });
    return dto;
  }
}

/** The app's one ValidationPipe instance: the global pipe and the early validation share what it remembers. */
export const VALIDATION_PIPE = Symbol('VALIDATION_PIPE');

/** The one validation pipe of the app: unknown fields are rejected, nothing is coerced silently. */
export function createValidationPipe(): ValidationPipe {
  return new OncePerBodyValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    exceptionFactory: (errors) => new RequestValidationError(errors.flatMap((error) => messagesOf(error))),
  });
}

// class-validator messages already start with the property's name ("monto must be an integer ...").
function messagesOf(error: ValidationError): string[] {
  return [...Object.values(error.constraints ?? {}), ...(error.children ?? []).flatMap((child) => messagesOf(child))];
}

interface RouteArgument {
  readonly index: number;
  readonly data?: string;
}

/** The `@Body()` arguments of a route handler, read from Nest's metadata once per handler. */
const bodyArgumentsOf = (() => {
  const known = new WeakMap<object, ReadonlyArray<{ readonly data?: string; readonly metatype: unknown }>>();
  return (context: ExecutionContext) => {
    const handler = context.getHandler();
    let found = known.get(handler);
    if (!found) {
      const controller = context.getClass();
      const routeArgs: Record<string, RouteArgument> = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {};
      const paramTypes: unknown[] = Reflect.getMetadata('design:paramtypes', controller.prototype, handler.name) ?? [];
      found = Object.entries(routeArgs)
        .filter(([key]) => Number(key.split(':')[0]) === RouteParamtypes.BODY)
        .map(([, argument]) => ({ data: argument.data, metatype: paramTypes[argument.index] }));
      known.set(handler, found);
    }
    return found;
  };
})();

/**
 * Validates the route's `@Body()` as its pipe will, but earlier. Nest runs pipes after interceptors;
 * code that must not act on an invalid request (claiming an idempotency key) calls this first.
 */
export async function validateRouteBody(context: ExecutionContext, pipe: ValidationPipe): Promise<void> {
  const body = context.switchToHttp().getRequest<FastifyRequest>().body as Record<string, unknown> | undefined;
  for (const { data, metatype } of bodyArgumentsOf(context)) {
    await pipe.transform(data ? body?.[data] : body, { type: 'body', metatype: metatype as never, data });
  }
}
