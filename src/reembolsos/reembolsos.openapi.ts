import { applyDecorators } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiTags } from '@nestjs/swagger';
import { UnauthenticatedError } from '../auth/auth.errors.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { ValidationFailedMembers } from '../http/problem-document.schema.js';
import { ApiStoredProblems } from '../idempotency/idempotency.openapi.js';
import { DatabaseUnavailableError, RequestValidationError, ShuttingDownError } from '../http/http.errors.js';
import { BODY_PROBLEMS } from '../http/json-body.parser.js';
import { BEARER_AUTH } from '../http/openapi-docs.js';
import { ESTADOS_PAGO } from '../pagos/pago.entity.js';
import { PagoNoEncontradoError, ProcesadorSinRespuestaError } from '../pagos/pagos.errors.js';
import { RateLimitedError } from '../rate-limit/rate-limit.errors.js';
import { ReembolsoResponse } from './dto/reembolso.response.js';
import { PagoNoReembolsableError, ReembolsoExcedePagoError, ReembolsoNoEncontradoError, ReembolsoRechazadoError } from './reembolsos.errors.js';

// Example values only: every problem below is rendered from the real error class.
const PAGO_ID = '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11';
const REEMBOLSO_ID = '5f2b1c9a-1d6e-4a57-8f0e-2c7d9b3a4e10';

/** The members `reembolso-excede-pago` adds. */
class ReembolsoExcedePagoMembers {
  @ApiProperty({ type: 'integer', description: 'The amount asked for.', example: 1500 })
  readonly montoSolicitado!: number;

  @ApiProperty({ type: 'integer', description: 'What the payment had left to refund when this was decided (refunds in progress count).', example: 1000 })
  readonly montoReembolsable!: number;
}

/** The member `pago-no-reembolsable` adds. */
class PagoNoReembolsableMembers {
  @ApiProperty({ enum: ESTADOS_PAGO, description: 'The payment\'s state; PENDIENTE comes with Retry-After and is not stored.', example: 'RECHAZADO' })
  readonly estadoPago!: string;
}

const LOCATION_HEADER = {
  Location: { description: 'The refund: `/pagos/{pagoId}/reembolsos/{id}`.', schema: { type: 'string', example: `/pagos/${PAGO_ID}/reembolsos/${REEMBOLSO_ID}` } },
};

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
    ApiOperation({
      operationId: 'crearReembolso',
      summary: 'Refund (part of) an approved payment, at most once per Idempotency-Key',
      description:
        'Gives `monto` back once, however often the request is retried with the same `Idempotency-Key`, path ' +
        'and body: a retry gets the stored answer (`Idempotent-Replayed: true`). The refunds of a payment never ' +
        'add up to more than it charged, however many arrive at once. A refund the processor has not decided yet is ' +
        'answered `202` (`PENDIENTE`); its outcome arrives by Stripe\'s webhook or the reconciler (`reembolso.aprobado` or ' +
        '`reembolso.fallido`). An approved refund may still fail later (the bank returns it): it becomes `FALLIDO`, its ' +
        'amount can be refunded again, and `reembolso.fallido` announces it.',
    }),
    ApiCreatedResponse({ type: ReembolsoResponse, description: 'Refunded (`estado: APROBADO`).', headers: LOCATION_HEADER }),
    ApiAcceptedResponse({
      type: ReembolsoResponse,
      description:
        'Accepted, not decided yet (`estado: PENDIENTE`): the processor answers later. Read the outcome with ' +
        '`GET /pagos/{pagoId}/reembolsos/{id}` or wait for `reembolso.aprobado` / `reembolso.fallido`. Stored under the key like ' +
        'any answer: a retry replays it. Its amount counts against the payment until it fails.',
      headers: LOCATION_HEADER,
    }),
    ApiProblems([new RequestValidationError(['monto must be an integer amount in minor units (e.g. 500 for 5.00)'])], ValidationFailedMembers),
    ApiProblems([
      ...BODY_PROBLEMS,
      new RateLimitedError(30),
      // A route-level status replaces the controller's: every 500 and 503 of this route is listed here,
      // so that the headers of idempotent answers are documented on them too.
      new Error('example'),
      new DatabaseUnavailableError(),
      new ShuttingDownError(),
      new ProcesadorSinRespuestaError('refund'),
    ]),
    // The payment is checked once the key is claimed: its 404 is stored like the route's other final answers.
    ApiStoredProblems([new PagoNoEncontradoError()]),
    // Refused, or answered failed or canceled at once: nothing refunded, the amount back on the payment.
    ApiStoredProblems([new ReembolsoRechazadoError(PAGO_ID, 'Charge ch_3Q has already been refunded.')]),
    ApiStoredProblems([new ReembolsoExcedePagoError(PAGO_ID, 1500, 1000)], ReembolsoExcedePagoMembers),
    ApiStoredProblems([new PagoNoReembolsableError(PAGO_ID, 'RECHAZADO')], PagoNoReembolsableMembers),
    ApiProblems([new PagoNoReembolsableError(PAGO_ID, 'PENDIENTE')], PagoNoReembolsableMembers),
  );
}

export function ApiListarReembolsos(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ operationId: 'listarReembolsos', summary: "A payment's refunds, oldest first (every state)", description: 'Every refund of the payment: `PENDIENTE`, `APROBADO` and `FALLIDO`.' }),
    ApiOkResponse({ type: [ReembolsoResponse] }),
  );
}

export function ApiReembolsoPorId(): MethodDecorator {
  return applyDecorators(
    ApiOperation({ operationId: 'obtenerReembolso', summary: 'One refund of one of your payments', description: 'The refund as it is now; while approved, the body its `201` carried.' }),
    ApiParam({ name: 'id', format: 'uuid', description: 'The refund; unknown and malformed ids are 404.' }),
    ApiOkResponse({ type: ReembolsoResponse }),
    ApiProblems([new ReembolsoNoEncontradoError()]),
  );
}
