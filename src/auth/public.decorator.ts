import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'auth:public';

/** Opens a route to unauthenticated callers (health checks); every other route needs a bearer token. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);
