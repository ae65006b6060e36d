import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** Name of the bearer scheme in the document; controllers refer to it with `@ApiBearerAuth`. */
export const BEARER_AUTH = 'bearer';
export const DOCS_PATH = 'docs';
export const OPENAPI_JSON_PATH = `${DOCS_PATH}/openapi.json`;

const DESCRIPTION =
  'Idempotent payments: however often the same `POST /pagos` arrives, the customer is charged at most ' +
  'once and every retry gets the first answer. Every error is `application/problem+json` (RFC 9457).';

/**
 * Serves Swagger UI at `/docs` and the OpenAPI document at `/docs/openapi.json`. They are plain
 * Fastify routes, outside Nest's guards: public, as documentation of a public contract should be.
 */
export function serveOpenApiDocs(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('pagos')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque', description: 'A token configured in `API_TOKENS`; it names the client that scopes idempotency keys.' }, BEARER_AUTH)
    .build();
  // Built on the first request, not at start-up: most processes never serve it.
  SwaggerModule.setup(DOCS_PATH, app, () => SwaggerModule.createDocument(app, config), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'pagos API',
  });
}
