import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiSchema, ApiTags } from '@nestjs/swagger';
import { UnauthenticatedError } from '../auth/auth.errors.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { DatabaseUnavailableError, RequestValidationError, ShuttingDownError } from '../http/http.errors.js';
import { BODY_PROBLEMS } from '../http/json-body.parser.js';
import { BEARER_AUTH } from '../http/openapi-docs.js';
import { RateLimitedError } from '../rate-limit/rate-limit.errors.js';
import { PagoResponse } from './dto/pago.response.js';
import {
  OrdenConPagoEnCursoError, OrdenYaPagadaError, PagoNoEncontradoError, PagoRechazadoError, PasarelaNoDisponibleError, ProcesadorSinRespuestaError,
} from './pagos.errors.js';

// Example values only: every problem below is rendered from the real error class.
const PAGO_ID = '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11';
const PAGO_RECHAZADO: PagoResponse = { id: PAGO_ID, numeroOrden: 'ORD-1001', monto: 1999, moneda: 'EUR', montoReembolsado: 0, estado: 'RECHAZADO', creadoEn: '2026-12-02T18:21:37.435Z' };

@ApiSchema({ name: 'PagoRechazadoProblem', description: 'Extension member of `pago-rechazado`.' })
class PagoRechazadoProblem {
  @ApiProperty({ type: PagoResponse, description: 'The declined payment (`estado: RECHAZADO`).' })
  readonly pago!: PagoResponse;
}

@ApiSchema({ name: 'OrdenEnConflictoProblem', description: 'Extension member of `orden-ya-pagada` and `orden-con-pago-en-curso`.' })
class OrdenEnConflictoProblem {
  @ApiProperty({ description: 'The payment that holds the order (`unknown` when it settled while we looked).', example: PAGO_ID })
  readonly pagoExistenteId!: string;
}

/** What every route of the controller shares: bearer auth and the failures any request may meet. */
export function ApiPagos(): ClassDecorator {
  return applyDecorators(
    ApiTags('pagos'),
    ApiBearerAuth(BEARER_AUTH),
    ApiProblems([new UnauthenticatedError(), new Error('example'), new DatabaseUnavailableError(), new ShuttingDownError()]),
  );
}

export function ApiCrearPago(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'Pay an order, at most once per Idempotency-Key' }),
    ApiCreatedResponse({
      type: PagoResponse,
      description: 'Approved (`estado: APROBADO`).',
      headers: { Location: { description: 'The new payment: `/pagos/{id}`.', schema: { type: 'string', example: `/pagos/${PAGO_ID}` } } },
    }),
    ApiProblems([
      new RequestValidationError(['monto must be an integer amount in minor units (e.g. 1999 for 19.99)']),
      ...BODY_PROBLEMS,
      new PasarelaNoDisponibleError(),
      new RateLimitedError(30),
      // A route-level 503 replaces the controller's: every 503 of this route is listed here.
      new DatabaseUnavailableError(),
      new ShuttingDownError(),
      new ProcesadorSinRespuestaError(),
    ]),
    ApiProblems([new PagoRechazadoError(PAGO_RECHAZADO)], PagoRechazadoProblem),
    ApiProblems([new OrdenYaPagadaError('ORD-1001', PAGO_ID), new OrdenConPagoEnCursoError('ORD-1001', PAGO_ID)], OrdenEnConflictoProblem),
  );
}

export function ApiPagoPorId(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'One of your payments' }),
    ApiParam({ name: 'id', format: 'uuid', description: "Someone else's, unknown and malformed ids are all 404." }),
    ApiOkResponse({ type: PagoResponse }),
    ApiProblems([new PagoNoEncontradoError()]),
  );
}

export function ApiListarPagos(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'Your payments, oldest first' }),
    ApiOkResponse({ type: [PagoResponse] }),
    ApiProblems([new RequestValidationError(['numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"'])]),
  );
}
