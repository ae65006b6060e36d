import { applyDecorators } from '@nestjs/common';
import {
  ApiAcceptedResponse, ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiTags,
} from '@nestjs/swagger';
import { UnauthenticatedError } from '../auth/auth.errors.js';
import { ApiProblems } from '../http/api-problems.decorator.js';
import { ValidationFailedMembers } from '../http/problem-document.schema.js';
import { ApiStoredProblems } from '../idempotency/idempotency.openapi.js';
import { DatabaseUnavailableError, RequestValidationError, ShuttingDownError } from '../http/http.errors.js';
import { BODY_PROBLEMS } from '../http/json-body.parser.js';
import { BEARER_AUTH } from '../http/openapi-docs.js';
import { PREFER_HEADER, PREFERENCE_APPLIED_HEADER } from '../http/prefer-wait.js';
import { RateLimitedError } from '../rate-limit/rate-limit.errors.js';
import { PagoResponse } from './dto/pago.response.js';
import { ESPERA_MAXIMA_SEGUNDOS } from './pago-con-espera.js';
import {
  CursorDePagosDesconocidoError, ImporteNoAdmitidoError, OrdenConPagoEnCursoError, OrdenYaPagadaError, PagoNoEncontradoError, PagoRechazadoError, PasarelaNoDisponibleError,
  ProcesadorSinRespuestaError,
} from './pagos.errors.js';

// Example values only: every problem below is rendered from the real error class.
const PAGO_ID = '0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11';
const PAGO_RECHAZADO: PagoResponse = {
  id: PAGO_ID, numeroOrden: 'ORD-1001', monto: 1999, moneda: 'EUR', montoReembolsado: 0, estado: 'RECHAZADO', motivo: 'tarjeta', creadoEn: '2026-12-02T18:21:37.435Z',
};
const LOCATION_HEADER = { Location: { description: 'The payment: `/pagos/{id}`.', schema: { type: 'string', example: `/pagos/${PAGO_ID}` } } };

/** The member `pago-rechazado` adds. */
class PagoRechazadoMembers {
  @ApiProperty({ type: PagoResponse, description: 'The declined payment (`estado: RECHAZADO`).' })
  readonly pago!: PagoResponse;
}

/** The member `cursor-de-pagos-desconocido` adds. */
class CursorDePagosDesconocidoMembers {
  @ApiProperty({ description: 'The `desde` that names no payment of yours.', example: PAGO_ID })
  readonly desde!: string;
}

/** The member `orden-ya-pagada` and `orden-con-pago-en-curso` add. */
class OrdenEnConflictoMembers {
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
    ApiOperation({
      operationId: 'crearPago',
      summary: 'Pay an order, at most once per Idempotency-Key',
      description:
        'Charges the payment method once, however often the request is retried with the same `Idempotency-Key` ' +
        'and body: a retry gets the stored answer (`Idempotent-Replayed: true`) without charging again. ' +
        'A retry while the first attempt still runs is `409 idempotency-key-in-flight` at once, or waits for ' +
        'its answer with `Prefer: wait=N`. An order has at most one approved payment, whatever the keys. A card that needs ' +
        '3-D Secure is answered `202` with what the app needs to authenticate; the outcome arrives by Stripe\'s webhook or the reconciler.',
    }),
    ApiCreatedResponse({ type: PagoResponse, description: 'Approved (`estado: APROBADO`).', headers: LOCATION_HEADER }),
    ApiAcceptedResponse({
      type: PagoResponse,
      description:
        'The customer must authenticate (3-D Secure): `estado: REQUIERE_AUTENTICACION`, nothing charged yet. Hand `autenticacion.clientSecret` ' +
        "to Stripe's mobile SDK (`handleNextAction`), then read the outcome with `GET /pagos/{id}` and `Prefer: wait=N`. Stored under the key " +
        'like any answer: a retry replays it. The order stays held until it settles.',
      headers: LOCATION_HEADER,
    }),
    ApiProblems([new RequestValidationError(['monto must be an integer amount in minor units (e.g. 1999 for 19.99)'])], ValidationFailedMembers),
    ApiProblems([
      ...BODY_PROBLEMS,
      new PasarelaNoDisponibleError(),
      new RateLimitedError(30),
      // A route-level status replaces the controller's: every 500 and 503 of this route is listed here,
      // so that the headers of idempotent answers are documented on them too.
      new Error('example'),
      new DatabaseUnavailableError(),
      new ShuttingDownError(),
      new ProcesadorSinRespuestaError(),
    ]),
    ApiStoredProblems([new PagoRechazadoError(PAGO_RECHAZADO)], PagoRechazadoMembers),
    ApiStoredProblems([new ImporteNoAdmitidoError({ ...PAGO_RECHAZADO, motivo: 'importe-no-admitido' }, 'Amount must be at least €0.50 eur')], PagoRechazadoMembers),
    ApiStoredProblems([new OrdenYaPagadaError('ORD-1001', PAGO_ID)], OrdenEnConflictoMembers),
    ApiProblems([new OrdenConPagoEnCursoError('ORD-1001', PAGO_ID)], OrdenEnConflictoMembers),
  );
}

const PREFER_WAIT_DESCRIPTION =
  'RFC 7240. `wait=N`: while the payment is `PENDIENTE` or `REQUIERE_AUTENTICACION`, wait up to N seconds (at most ' +
  `${ESPERA_MAXIMA_SEGUNDOS}) for its outcome and answer as soon as it is decided, instead of polling: what an app sends ` +
  "right after Stripe's `handleNextAction`. A decided payment is answered at once. Other preferences, and a `wait` " +
  'that is not a whole number, are ignored.';

const PREFERENCE_APPLIED_DOC = {
  description: '`wait=N` when this request waited (N seconds at most) for the payment to be decided; absent when it answered at once.',
  schema: { type: 'string', example: 'wait=30' },
};

export function ApiPagoPorId(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'obtenerPago',
      summary: 'One of your payments, or its outcome once decided',
      description:
        'The payment as it is now, in any state. With `Prefer: wait=N`, a payment whose outcome is still to come is ' +
        'answered when it is decided or after N seconds, whichever is first, as it is then.',
    }),
    ApiParam({ name: 'id', format: 'uuid', description: "Someone else's, unknown and malformed ids are all 404." }),
    ApiHeader({ name: PREFER_HEADER, required: false, description: PREFER_WAIT_DESCRIPTION, example: 'wait=30' }),
    ApiOkResponse({ type: PagoResponse, headers: { [PREFERENCE_APPLIED_HEADER]: PREFERENCE_APPLIED_DOC } }),
    ApiProblems([new PagoNoEncontradoError()]),
  );
}

export function ApiListarPagos(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'listarPagos',
      summary: 'Your payments, oldest first, a page at a time',
      description:
        "Every payment of yours in any state; with `numeroOrden`, only that order's (at most one of them `APROBADO`). " +
        'Page with `desde` = the last id you got, until a page is shorter than `limit`: each payment that existed when you began is listed once.',
    }),
    ApiOkResponse({ type: [PagoResponse] }),
    ApiProblems([new RequestValidationError(['numeroOrden must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" or "-"'])], ValidationFailedMembers),
    ApiProblems([new CursorDePagosDesconocidoError(PAGO_ID)], CursorDePagosDesconocidoMembers),
  );
}
