import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { UnauthenticatedError } from '../auth/auth.errors.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { DatabaseUnavailableError, RequestValidationError, ShuttingDownError } from '../http/http.errors.js';
import { BODY_PROBLEMS } from '../http/json-body.parser.js';
import { BEARER_AUTH } from '../http/openapi-docs.js';
import { WebhookCreadoResponse, WebhookResponse } from './dto/webhook.response.js';
import { UrlDeWebhookNoPermitidaError, WebhookNoEncontradoError } from './webhooks.errors.js';

export function ApiWebhooks(): ClassDecorator {
  return applyDecorators(
    ApiTags('webhooks'),
    ApiBearerAuth(BEARER_AUTH),
    ApiProblems([new UnauthenticatedError(), new Error('example'), new DatabaseUnavailableError(), new ShuttingDownError()]),
  );
}

export function ApiCrearWebhook(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'Register a webhook endpoint, once per Idempotency-Key; its secret is in this answer only' }),
    ApiCreatedResponse({ type: WebhookCreadoResponse }),
    ApiProblems([
      new RequestValidationError(['eventos: pago.creado is not an event type']),
      ...BODY_PROBLEMS,
      new UrlDeWebhookNoPermitidaError('url must use https'),
    ]),
  );
}

export function ApiListarWebhooks(): MethodDecorator {
  return applyDecorators(ApiOperation({ summary: 'Your webhook endpoints, oldest first' }), ApiOkResponse({ type: [WebhookResponse] }));
}

export function ApiWebhookPorId(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'One of your webhook endpoints (without its secret)' }),
    ApiParam({ name: 'id', format: 'uuid', description: "Someone else's, unknown and malformed ids are all 404." }),
    ApiOkResponse({ type: WebhookResponse }),
    ApiProblems([new WebhookNoEncontradoError()]),
  );
}

export function ApiBorrarWebhook(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'Delete one of your webhook endpoints: nothing more is delivered to it' }),
    ApiParam({ name: 'id', format: 'uuid' }),
    ApiNoContentResponse({ description: 'Deleted.' }),
    ApiProblems([new WebhookNoEncontradoError()]),
  );
}
