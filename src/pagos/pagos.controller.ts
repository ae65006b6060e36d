import { Body, Controller, Get, HttpCode, HttpStatus, Param, ParseUUIDPipe, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthenticatedClient } from '../auth/authenticated-client.js';
import { JoinableCommit } from '../database/joinable-commit.decorator.js';
import type { DeferredCommit } from '../database/transactions.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { IdempotentOperationId } from '../idempotency/operation-id.decorator.js';
import { RateLimited } from '../rate-limit/rate-limited.decorator.js';
import { CrearPagoDto } from './dto/crear-pago.dto.js';
import { ListarPagosQuery, PAGOS_PAGE_DEFAULT } from './dto/listar-pagos.query.js';
import { type PagoResponse, toPagoResponse } from './dto/pago.response.js';
import { pagoLocation, statusOfAnswer } from './pago-answers.js';
import { PagoConEspera } from './pago-con-espera.js';
import { CursorDePagosDesconocidoError, PagoNoEncontradoError } from './pagos.errors.js';
import { ApiCrearPago, ApiListarPagos, ApiPagoPorId, ApiPagos } from './pagos.openapi.js';
import { PagosService } from './pagos.service.js';

// A malformed id can't name a payment: it gets the same 404 as an unknown one.
const uuidOr404 = new ParseUUIDPipe({ exceptionFactory: () => new PagoNoEncontradoError() });

@Controller('pagos')
@ApiPagos()
export class PagosController {
  constructor(
    private readonly pagos: PagosService,
    private readonly conEspera: PagoConEspera,
  ) {}

  @Post()
  @RateLimited()
  @Idempotent({ claimWithFirstWrite: true })
  @HttpCode(HttpStatus.CREATED)
  @ApiCrearPago()
  async crear(
    @Body({ schema: CrearPagoDto }) dto: CrearPagoDto,
    @AuthenticatedClient() clientId: string,
    @IdempotentOperationId() operationId: string | undefined,
    @JoinableCommit() commit: DeferredCommit | undefined,
    @Res({ passthrough: true }) response: FastifyReply,
  ): Promise<PagoResponse> {
    const pago = await this.pagos.crear({ ...dto, clientId, operationId }, commit);
    response.status(statusOfAnswer(pago)).header('Location', pagoLocation(pago.id));
    return toPagoResponse(pago);
  }

  @Get(':id')
  @ApiPagoPorId()
  async findOne(
    @Param('id', uuidOr404) id: string,
    @AuthenticatedClient() clientId: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) response: FastifyReply,
  ): Promise<PagoResponse> {
    const pago = await this.conEspera.leer(clientId, id, request, response);
    if (!pago) throw new PagoNoEncontradoError();
    return toPagoResponse(pago);
  }

  @Get()
  @ApiListarPagos()
  async list(@Query({ schema: ListarPagosQuery }) query: ListarPagosQuery, @AuthenticatedClient() clientId: string): Promise<PagoResponse[]> {
    const pagos = await this.pagos.list(clientId, { numeroOrden: query.numeroOrden, desde: query.desde, limit: query.limit ?? PAGOS_PAGE_DEFAULT });
    if (!pagos) throw new CursorDePagosDesconocidoError(query.desde!);
    return pagos.map(toPagoResponse);
  }
}
