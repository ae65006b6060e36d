import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiPropertyOptional, ApiSchema, ApiTags } from '@nestjs/swagger';
import { UnauthenticatedError } from '../auth/auth.errors.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { DatabaseUnavailableError, RequestValidationError, ShuttingDownError } from '../http/http.errors.js';
import { BODY_PROBLEMS } from '../http/json-body.parser.js';
import { BEARER_AUTH } from '../http/openapi-docs.js';
import { ESTADOS_PAGO } from '../pagos/pago.entity.js';
import { PagoNoEncontradoError, ProcesadorSinRespuestaError } from '../pagos/pagos.errors.js';
import { RateLimitedError } from '../rate-limit/rate-limit.errors.js';
import { ReembolsoResponse } from './dto/reembolso.response.js';
import {
  PagoNoReembolsableError, PasarelaNoDisponibleParaReembolsoError, ReembolsoExcedePagoError, ReembolsoNoEncontradoError, ReembolsoRechazadoError,
} from './reembolsos.errors.js';

// Example values only: every problem below is rendered from the real error class.
const PAGO_ID = '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11';
const REEMBOLSO_ID = '5f2b1c9a-1d6e-4a57-8f0e-2c7d9b3a4e10';

@ApiSchema({ name: 'ReembolsoExcedePagoProblem', description: 'Extension members of `reembolso-excede-pago`.' })
class ReembolsoExcedePagoProblem {
  @ApiProperty({ type: 'integer', description: 'The amount asked for.', example: 1500 })
  readonly montoSolicitado!: number;

  @ApiProperty({ type: 'integer', description: 'What the payment had left to refund when this was decided (refunds in progress count).', example: 1000 })
  readonly montoReembolsable!: number;
}

@ApiSchema({ name: 'PagoNoReembolsableProblem', description: 'Extension member of `pago-no-reembolsable`.' })
class PagoNoReembolsableProblem {
  @ApiPropertyOptional({ enum: ESTADOS_PAGO, description: 'The payment\'s state; PENDIENTE comes with Retry-After and is not stored.', example: 'RECHAZADO' })
  readonly estadoPago!: string;
}

const pagoParam = ApiParam({ name: 'pagoId', format: 'uuid', description: "The payment. Someone else's, unknown and malformed ids are all 404." });

/** What every route of the controller shares: bearer auth, the payment path and the failures any request may meet. */
export function ApiReembolsos(): ClassDecorator {
  return applyDecorators(
    ApiTags('reembolsos'),
    ApiBearerAuth(BEARER_AUTH),
    pagoParam,
    ApiProblems([new UnauthenticatedError(), new Error('example'), new DatabaseUnavailableError(), new ShuttingDownError(), new PagoNoEncontradoError()]),
  );
}

export function ApiCrearReembolso(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'Refund (part of) an approved payment, at most once per Idempotency-Key' }),
    ApiCreatedResponse({
      type: ReembolsoResponse,
      description: 'Refunded (`estado: APROBADO`).',
      headers: {
        Location: { description: 'The new refund: `/pagos/{pagoId}/reembolsos/{id}`.', schema: { type: 'string', example: `/pagos/${PAGO_ID}/reembolsos/${REEMBOLSO_ID}` } },
      },
    }),
    ApiProblems([
      new RequestValidationError(['monto must be an integer amount in minor units (e.g. 500 for 5.00)']),
      ...BODY_PROBLEMS,
      new PasarelaNoDisponibleParaReembolsoError(),
      new RateLimitedError(30),
      // A route-level 503 replaces the controller's: every 503 of this route is listed here.
      new DatabaseUnavailableError(),
      new ShuttingDownError(),
      new ProcesadorSinRespuestaError('refund'),
      new ReembolsoRechazadoError(PAGO_ID, 'Charge ch_3Q has already been refunded.'),
    ]),
    ApiProblems([new ReembolsoExcedePagoError(PAGO_ID, 1500, 1000)], ReembolsoExcedePagoProblem),
    ApiProblems([new PagoNoReembolsableError(PAGO_ID, 'RECHAZADO'), new PagoNoReembolsableError(PAGO_ID, 'PENDIENTE')], PagoNoReembolsableProblem),
  );
}

export function ApiListarReembolsos(): MethodDecorator {
  return applyDecorators(ApiOperation({ summary: "A payment's refunds, oldest first (every state)" }), ApiOkResponse({ type: [ReembolsoResponse] }));
}

export function ApiReembolsoPorId(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: 'One refund of one of your payments' }),
    ApiParam({ name: 'id', format: 'uuid', description: 'The refund; unknown and malformed ids are 404.' }),
    ApiOkResponse({ type: ReembolsoResponse }),
    ApiProblems([new ReembolsoNoEncontradoError()]),
  );
}
