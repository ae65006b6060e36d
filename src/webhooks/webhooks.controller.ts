import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, ParseUUIDPipe, Post, Query } from '@nestjs/common';
import { AuthenticatedClient } from '../auth/authenticated-client.js';
import { JoinableCommit } from '../database/joinable-commit.decorator.js';
import type { DeferredCommit } from '../database/transactions.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { RateLimited } from '../rate-limit/rate-limited.decorator.js';
import { CrearWebhookDto } from './dto/crear-webhook.dto.js';
import { ListarWebhooksQuery, WEBHOOKS_PAGE_DEFAULT } from './dto/listar-webhooks.query.js';
import { toWebhookResponse, type WebhookCreadoResponse, type WebhookResponse } from './dto/webhook.response.js';
import { CursorDeWebhooksDesconocidoError, WebhookNoEncontradoError } from './webhooks.errors.js';
import { ApiBorrarWebhook, ApiCrearWebhook, ApiListarWebhooks, ApiWebhookPorId, ApiWebhooks } from './webhooks.openapi.js';
import { WebhooksService } from './webhooks.service.js';

// A malformed id can't name an endpoint: the same 404 as an unknown one.
const uuidOr404 = new ParseUUIDPipe({ exceptionFactory: () => new WebhookNoEncontradoError() });

@Controller('webhooks')
@ApiWebhooks()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @RateLimited()
  @Idempotent()
  @HttpCode(HttpStatus.CREATED)
  @ApiCrearWebhook()
  async crear(
    @Body({ schema: CrearWebhookDto }) dto: CrearWebhookDto,
    @AuthenticatedClient() clientId: string,
    @JoinableCommit() commit: DeferredCommit | undefined,
  ): Promise<WebhookCreadoResponse> {
    const { endpoint, secret } = await this.webhooks.create({ clientId, url: dto.url, eventTypes: dto.eventos }, commit);
    return { ...toWebhookResponse(endpoint), secreto: secret };
  }

  @Get()
  @ApiListarWebhooks()
  async list(@Query({ schema: ListarWebhooksQuery }) query: ListarWebhooksQuery, @AuthenticatedClient() clientId: string): Promise<WebhookResponse[]> {
    const endpoints = await this.webhooks.list(clientId, query.desde, query.limit ?? WEBHOOKS_PAGE_DEFAULT);
    if (!endpoints) throw new CursorDeWebhooksDesconocidoError(query.desde!);
    return endpoints.map(toWebhookResponse);
  }

  @Get(':id')
  @ApiWebhookPorId()
  async findOne(@Param('id', uuidOr404) id: string, @AuthenticatedClient() clientId: string): Promise<WebhookResponse> {
    const endpoint = await this.webhooks.findOne(clientId, id);
    if (!endpoint) throw new WebhookNoEncontradoError();
    return toWebhookResponse(endpoint);
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBorrarWebhook()
  async remove(@Param('id', uuidOr404) id: string, @AuthenticatedClient() clientId: string): Promise<void> {
    if (!(await this.webhooks.remove(clientId, id))) throw new WebhookNoEncontradoError();
  }
}
