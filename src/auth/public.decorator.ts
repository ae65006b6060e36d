import { applyDecorators, SetMetadata } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';

export const PUBLIC_ROUTE = 'auth:public';

// OpenAPI `security: []`: the operation needs no credentials. @nestjs/swagger writes an empty list
// only from a controller's metadata (a method's empty one is dropped), so mark whole controllers.
const documentNoSecurity = (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor): void => {
  Reflect.defineMetadata(DECORATORS.API_SECURITY, [], descriptor ? descriptor.value : target);
};

/**
 * Opens a controller's routes to unauthenticated callers (health checks, the metrics scrape); every
 * other route needs a bearer token. Documents them as public (`security: []`) too.
 */
export const Public = (): MethodDecorator & ClassDecorator => applyDecorators(SetMetadata(PUBLIC_ROUTE, true), documentNoSecurity);
