import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, type OperationObject, type ResponseObject, SwaggerModule } from '@nestjs/swagger';
import { REQUEST_ID_HEADER } from '../logging/request-id.js';

/** Name of the bearer scheme in the document; controllers refer to it with `@ApiBearerAuth`. */
export const BEARER_AUTH = 'bearer';
export const DOCS_PATH = 'docs';
export const OPENAPI_JSON_PATH = `${DOCS_PATH}/openapi.json`;

const DESCRIPTION =
  'Idempotent payments: however often the same `POST /pagos` arrives, the customer is charged at most ' +
  'once and every retry gets the first answer. Every error is `application/problem+json` (RFC 9457), ' +
  'one schema per problem `type`; where a status has several, they are `oneOf` with a discriminator on `type`.';

// The package is UNLICENSED (npm's word for "no license granted"): the contract is published, the service is not.
const LICENSE = 'Proprietary (UNLICENSED): no license is granted to use, copy or distribute this service';

const TAGS: ReadonlyArray<[name: string, description: string]> = [
  ['pagos', 'Payments: charged at most once per Idempotency-Key, at most one approved per order.'],
  ['reembolsos', 'Refunds of approved payments, at most once per Idempotency-Key, never more than was charged.'],
  ['eventos', 'What happened to your payments and refunds, oldest first: the feed behind the webhooks.'],
  ['webhooks', 'Your endpoints for signed event deliveries (Standard Webhooks), at least once.'],
  ['stripe', "Stripe's signed webhooks in: what the processor learned after it answered (3-D Secure finished, a payment settled, a refund failed)."],
  ['health', 'Probes for orchestrators and load balancers; public.'],
  ['metrics', 'The Prometheus scrape; public (keep it off the public proxy).'],
];

// Tags come from `@ApiTags` and are declared above, with a description; none is made up from a class name.
const DOCUMENT_OPTIONS = { autoTagControllers: false };

const REQUEST_ID_DOC = {
  description: 'Names this request in the service\'s log: the `X-Request-Id` the caller sent when it is a plain token (1–128 of `A-Za-z0-9._:-`), else a new UUID.',
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 128, example: '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11' },
};

/**
 * Serves Swagger UI at `/docs` and the OpenAPI document at `/docs/openapi.json`. They are plain
 * Fastify routes, outside Nest's guards: public, as documentation of a public contract should be.
 */
export function serveOpenApiDocs(app: INestApplication): void {
  const builder = new DocumentBuilder()
    .setTitle('pagos')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    // Relative: wherever the document is served from (`/docs/openapi.json`), the API is that host's root.
    .addServer('/', 'This service, on the host that serves this document')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque', description: 'A token configured in `API_TOKENS`; it names the client that scopes idempotency keys.' }, BEARER_AUTH);
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const config = builder.build();
  config.info.license = { name: LICENSE };
  // Built on the first request, not at start-up: most processes never serve it.
  SwaggerModule.setup(DOCS_PATH, app, () => withRequestIdHeader(withoutEmptyContact(SwaggerModule.createDocument(app, config, DOCUMENT_OPTIONS))), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'pagos API',
  });
}

// DocumentBuilder starts with `contact: {}`; there is no team address to give (see docs/api.md).
function withoutEmptyContact(document: OpenAPIObject): OpenAPIObject {
  const { contact, ...info } = document.info;
  return contact && Object.keys(contact).length > 0 ? document : { ...document, info };
}

// The request log's onRequest hook sets it on every answer, of every route, whoever writes the answer.
function withRequestIdHeader(document: OpenAPIObject): OpenAPIObject {
  document.components = { ...document.components, headers: { ...document.components?.headers, [REQUEST_ID_HEADER]: REQUEST_ID_DOC } };
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem) as OperationObject[]) {
      for (const response of Object.values(operation.responses) as ResponseObject[]) {
        response.headers = { [REQUEST_ID_HEADER]: { $ref: `#/components/headers/${REQUEST_ID_HEADER}` }, ...response.headers };
      }
    }
  }
  return document;
}
