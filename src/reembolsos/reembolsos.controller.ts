import { Body, Controller, Get, HttpCode, HttpStatus, Param, ParseUUIDPipe, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AuthenticatedClient } from '../auth/authenticated-client.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { IdempotentOperationId } from '../idempotency/operation-id.decorator.js';
import { PagoNoEncontradoError } from '../pagos/pagos.errors.js';
import { RateLimited } from '../rate-limit/rate-limited.decorator.js';
import { CrearReembolsoDto } from './dto/crear-reembolso.dto.js';
import { type ReembolsoResponse, toReembolsoResponse } from './dto/reembolso.response.js';
import { reembolsoLocation, statusOfAnswer } from './reembolso-answers.js';
import { ReembolsoNoEncontradoError } from './reembolsos.errors.js';
import { ApiCrearReembolso, ApiListarReembolsos, ApiReembolsoPorId, ApiReembolsos } from './reembolsos.openapi.js';
import { ReembolsosService } from './reembolsos.service.js';
import { JoinableCommit } from '../database/joinable-commit.decorator.js';
import type { DeferredCommit } from '../database/transactions.js';

// A malformed id can't name a payment or refund: the same 404 as an unknown one, as for GET /pagos/{id}.
const pagoIdOr404 = new ParseUUIDPipe({ exceptionFactory: () => new PagoNoEncontradoError() });
const reembolsoIdOr404 = new ParseUUIDPipe({ exceptionFactory: () => new ReembolsoNoEncontradoError() });

@Controller('pagos/:pagoId/reembolsos')
@ApiReembolsos()
export class ReembolsosController {
  constructor(private readonly reembolsos: ReembolsosService) {}

  @Post()
  @RateLimited()
  @Idempotent()
  @HttpCode(HttpStatus.CREATED)
  @ApiCrearReembolso()
  async crear(
    @Param('pagoId', pagoIdOr404) pagoId: string,
    @Body({ schema: CrearReembolsoDto }) dto: CrearReembolsoDto,
    @AuthenticatedClient() clientId: string,
    @IdempotentOperationId() operationId: string | undefined,
    @JoinableCommit() commit: DeferredCommit | undefined,
    @Res({ passthrough: true }) response: FastifyReply,
  ): Promise<ReembolsoResponse> {
    const reembolso = await this.reembolsos.crear({ ...dto, pagoId, clientId, operationId }, commit);
    response.status(statusOfAnswer(reembolso)).header('Location', reembolsoLocation(reembolso));
    return toReembolsoResponse(reembolso);
  }

  @Get()
  @ApiListarReembolsos()
  async list(@Param('pagoId', pagoIdOr404) pagoId: string, @AuthenticatedClient() clientId: string): Promise<ReembolsoResponse[]> {
    const reembolsos = await this.reembolsos.list(clientId, pagoId);
    if (!reembolsos) throw new PagoNoEncontradoError();
    return reembolsos.map(toReembolsoResponse);
  }

  @Get(':id')
  @ApiReembolsoPorId()
  async findOne(
    @Param('pagoId', pagoIdOr404) pagoId: string,
    @Param('id', reembolsoIdOr404) id: string,
    @AuthenticatedClient() clientId: string,
  ): Promise<ReembolsoResponse> {
    const reembolso = await this.reembolsos.findOne(clientId, pagoId, id);
    if (!reembolso) throw new ReembolsoNoEncontradoError();
    return toReembolsoResponse(reembolso);
  }
}
