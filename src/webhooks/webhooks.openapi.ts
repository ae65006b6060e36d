import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiTags } from '@nestjs/swagger';
import { UnauthenticatedError } from '../auth/auth.errors.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { DatabaseUnavailableError, RequestValidationError, ShuttingDownError } from '../http/http.errors.js';
import { BODY_PROBLEMS } from '../http/json-body.parser.js';
import { BEARER_AUTH } from '../http/openapi-docs.js';
import { ValidationFailedMembers } from '../http/problem-document.schema.js';
import { ApiStoredProblems } from '../idempotency/idempotency.openapi.js';
import { RateLimitedError } from '../rate-limit/rate-limit.errors.js';
import { WebhookCreadoResponse, WebhookResponse } from './dto/webhook.response.js';
import { CursorDeWebhooksDesconocidoError, LimiteDeWebhooksError, UrlDeWebhookNoPermitidaError, WebhookNoEncontradoError } from './webhooks.errors.js';

/** The member `cursor-de-webhooks-desconocido` adds. */
class CursorDeWebhooksDesconocidoMembers {
  @ApiProperty({ description: 'The `desde` that names no endpoint of yours.', example: '7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6' })
  readonly desde!: string;
}

/** The member `limite-de-webhooks` adds. */
class LimiteDeWebhooksMembers {
  @ApiProperty({ description: 'How many endpoints a client may have (WEBHOOKS_MAX_PER_CLIENT).', example: 20 })
  readonly limite!: number;
}

/** The member `url-de-webhook-no-permitida` adds. */
class UrlDeWebhookNoPermitidaMembers {
  @ApiProperty({ description: 'Why the URL may not be called.', example: 'url must use https' })
  readonly motivo!: string;
}

export function ApiWebhooks(): ClassDecorator {
  return applyDecorators(
    ApiTags('webhooks'),
    ApiBearerAuth(BEARER_AUTH),
    ApiProblems([new UnauthenticatedError(), new Error('example'), new DatabaseUnavailableError(), new ShuttingDownError()]),
  );
}

export function ApiCrearWebhook(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'crearWebhook',
      summary: 'Register a webhook endpoint, once per Idempotency-Key; its secret is in this answer only',
      description: 'The `secreto` (`whsec_…`) signs every delivery (Standard Webhooks); a retry with the same key answers the same secret. A client has at most WEBHOOKS_MAX_PER_CLIENT endpoints (20 by default): one more is a 409 `limite-de-webhooks`. Rate-limited per client, like `POST /pagos`.',
    }),
    ApiCreatedResponse({ type: WebhookCreadoResponse }),
    ApiProblems([new RequestValidationError(['eventos: pago.creado is not an event type'])], ValidationFailedMembers),
    // A route-level status replaces the controller's: its 500 and 503 are listed again, so that the
    // rate-limit headers (and those of idempotent answers) are documented on them too.
    ApiProblems([...BODY_PROBLEMS, new RateLimitedError(30), new Error('example'), new DatabaseUnavailableError(), new ShuttingDownError()]),
    ApiStoredProblems([new UrlDeWebhookNoPermitidaError('url must use https')], UrlDeWebhookNoPermitidaMembers),
    ApiStoredProblems([new LimiteDeWebhooksError(20)], LimiteDeWebhooksMembers),
  );
}

export function ApiListarWebhooks(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'listarWebhooks',
      summary: 'Your webhook endpoints, oldest first, a page at a time',
      description: 'Without their secrets; a disabled one says so. Page with `desde` = the last id you got, until a page is shorter than `limit`.',
    }),
    ApiOkResponse({ type: [WebhookResponse] }),
    ApiProblems([new RequestValidationError(['limit must be an integer from 1 to 100'])], ValidationFailedMembers),
    ApiProblems([new CursorDeWebhooksDesconocidoError('7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6')], CursorDeWebhooksDesconocidoMembers),
  );
}

export function ApiWebhookPorId(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ operationId: 'obtenerWebhook', summary: 'One of your webhook endpoints (without its secret)', description: 'Its URL, event types and whether deliveries to it are disabled.' }),
    ApiParam({ name: 'id', format: 'uuid', description: "Someone else's, unknown and malformed ids are all 404." }),
    ApiOkResponse({ type: WebhookResponse }),
    ApiProblems([new WebhookNoEncontradoError()]),
  );
}

export function ApiBorrarWebhook(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ operationId: 'borrarWebhook', summary: 'Delete one of your webhook endpoints', description: 'Nothing more is delivered to it.' }),
    ApiParam({ name: 'id', format: 'uuid', description: "Someone else's, unknown and malformed ids are all 404." }),
    ApiNoContentResponse({ description: 'Deleted.' }),
    ApiProblems([new WebhookNoEncontradoError()]),
  );
}
