import { randomUUID } from 'node:crypto';
import {
  Body, type CallHandler, type CanActivate, Controller, type ExecutionContext, Headers, HttpCode, HttpStatus, Inject, Injectable, Module, type NestInterceptor,
  type OnModuleDestroy, Post, Req, StandardSchemaValidationPipe, UseGuards, UseInterceptors, UsePipes,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import pg from 'pg';
import type { Observable } from 'rxjs';
import { ApiTokenVerifier } from '../src/auth/api-token-verifier.js';
import type { ApiClient } from '../src/config/app-config.js';
import { fingerprintRequest } from '../src/idempotency/fingerprint.js';
import { CrearPagoDto } from '../src/pagos/dto/crear-pago.dto.js';
import type { PaymentGateway } from '../src/gateway/payment-gateway.js';
import { gatedStatement, splitGated } from '../src/database/gated-write.js';
import { INSERT_EVENT } from '../src/eventos/eventos.sql.js';
import { newEventId } from '../src/eventos/outbox.js';
import { CLAIM_KEY, COMPLETE_KEY } from '../src/idempotency/idempotency.sql.js';
import { processorKeyOf } from '../src/pagos/pago.entity.js';
import { ASENTAR_PAGO, INICIAR_PAGO, REGISTRAR_INTENT } from '../src/pagos/pagos.sql.js';

const POOL = Symbol('POOL');
const GATEWAY = Symbol('GATEWAY');
const VERIFIER = Symbol('VERIFIER');
// The service's own pool size and transaction bounds, so that only the layers around the statements differ.
const POOL_SIZE = 10;
const BEGIN = 'BEGIN; SET LOCAL lock_timeout = 5000; SET LOCAL statement_timeout = 15000';
// The claim's statement stores a fingerprint; computing one is the service's work, not the statement's.
const REQUEST_HASH = 'f'.repeat(64);
// A new payment's first attempt, whose keys at the processor the route's first attempt uses too.
const INTENTO = 1;

/** The key a payment of `/floor/pagos-idempotentes` claims with its start and completes with its settlement. */
interface FloorClaim {
  readonly key: string;
  readonly lockToken: string;
  /** The request's fingerprint, where the route computes one. */
  readonly requestHash?: string;
}

type FingerprintedRequest = FastifyRequest & { fingerprint?: string };

/** What `/floor/pagos-minimos` sends besides the claim's statements. */
interface FloorExtras {
  /** The payment's event, in its settlement's transaction (the outbox's statement). */
  readonly event: boolean;
}

/** Hands every request on untouched: what wrapping a route in an interceptor costs Nest itself. */
@Injectable()
class PassThroughInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

/** The bearer token checked as the service's guard checks it (its SHA-256, in constant time), and nothing else. */
@Injectable()
class BearerTokenGuard implements CanActivate {
  constructor(@Inject(VERIFIER) private readonly verifier: ApiTokenVerifier) {}

  canActivate(context: ExecutionContext): boolean {
    const authorization = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization ?? '';
    return this.verifier.clientIdFor(authorization.replace(/^Bearer /, '')) !== undefined;
  }
}

/** The request's fingerprint, as the idempotency layer computes it, for the claim to store. */
@Injectable()
class FingerprintInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FingerprintedRequest>();
    request.fingerprint = fingerprintRequest({ method: request.method, target: request.url, body: request.body });
    return next.handle();
  }
}

interface FloorBody {
  readonly numeroOrden: string;
  readonly monto: number;
  readonly moneda: string;
  readonly token: string;
}

/**
 * The floor: the statements and processor calls of a payment (PENDIENTE row; the intent created,
 * recorded and confirmed through the service's own Stripe adapter, under the same keys and metadata;
 * the final state in a transaction whose BEGIN is pipelined with it) in a plain Nest route with none
 * of the service's guards, interceptors, pipes or hooks, on a raw node-postgres pool in pipeline mode,
 * on the same HTTP adapter (Fastify) as the service. `/floor/pagos-idempotentes` adds the
 * statements exactly-once needs, as a first execution sends them (the claim in one statement with the
 * payment's start, which it gates; the completion pipelined with COMMIT), and nothing else: what
 * those statements cost, without the layer that decides on them.
 */
@Controller('floor')
class FloorController {
  constructor(
    @Inject(POOL) private readonly pool: pg.Pool,
    @Inject(GATEWAY) private readonly gateway: PaymentGateway,
  ) {}

  @Post('pagos')
  @HttpCode(HttpStatus.CREATED)
  async crear(@Body() body: FloorBody): Promise<unknown> {
    return this.pay(body, randomUUID(), undefined);
  }

  @Post('pagos-idempotentes')
  @HttpCode(HttpStatus.CREATED)
  async crearIdempotente(@Body() body: FloorBody, @Headers('idempotency-key') key: string): Promise<unknown> {
    return this.pay(body, randomUUID(), { key, lockToken: randomUUID() });
  }

  /**
   * The least a first execution can be in the service's shape: the claim's statements, the payment's
   * event in its settlement, and the route wrapped in an interceptor (one that does nothing).
   */
  @Post('pagos-minimos')
  @UseInterceptors(PassThroughInterceptor)
  @HttpCode(HttpStatus.CREATED)
  async crearMinimo(@Body() body: FloorBody, @Headers('idempotency-key') key: string): Promise<unknown> {
    return this.pay(body, randomUUID(), { key, lockToken: randomUUID() }, { event: true });
  }

  /**
   * That, with the checks every payment must pass and nothing else: the bearer token, the body
   * against the route's schema, and the request's fingerprint for the claim, each done by the
   * service's own functions, in the Nest guard, pipe and interceptor that would carry them.
   */
  @Post('pagos-minimos-verificados')
  @UseGuards(BearerTokenGuard)
  @UseInterceptors(FingerprintInterceptor)
  @UsePipes(new StandardSchemaValidationPipe())
  @HttpCode(HttpStatus.CREATED)
  async crearMinimoVerificado(
    @Body({ schema: CrearPagoDto }) body: CrearPagoDto,
    @Headers('idempotency-key') key: string,
    @Req() request: FingerprintedRequest,
  ): Promise<unknown> {
    return this.pay(body, randomUUID(), { key, lockToken: randomUUID(), requestHash: request.fingerprint }, { event: true });
  }

  private async pay(body: FloorBody, operationId: string, claim: FloorClaim | undefined, extras: FloorExtras = { event: false }): Promise<unknown> {
    const pago = await this.start(body, operationId, claim);
    const intentId = await this.charge(pago.id, operationId, body);
    const client = await this.pool.connect();
    try {
      const answer = { id: pago.id, numeroOrden: body.numeroOrden, monto: Number(pago.monto), moneda: pago.moneda, estado: 'APROBADO', creadoEn: pago.creadoEn };
      // All go out before any answers; a settlement or completion that fails makes PostgreSQL answer COMMIT with ROLLBACK.
      const settling = [client.query(BEGIN), client.query(ASENTAR_PAGO, [pago.id, 'APROBADO', intentId, null, null, null])];
      const announcing = extras.event && client.query(INSERT_EVENT, [newEventId(), 'floor', 'pago.aprobado', JSON.stringify({ type: 'pago.aprobado', data: answer })]);
      const completing = claim && client.query(COMPLETE_KEY, ['floor', claim.key, claim.lockToken, 201, '{}', JSON.stringify(answer)]);
      await Promise.all([...settling, announcing, completing, client.query('COMMIT')]);
      return answer;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** The PENDIENTE row: on its own, or in one statement with the key's claim that gates it; either commits alone. */
  private async start(body: FloorBody, operationId: string, claim: FloorClaim | undefined) {
    const params = [randomUUID(), 'floor', operationId, body.numeroOrden, body.monto, body.moneda];
    if (!claim) return (await this.pool.query(INICIAR_PAGO, params)).rows[0];
    const gate = { text: CLAIM_KEY, values: ['floor', claim.key, 30, claim.lockToken, claim.requestHash ?? REQUEST_HASH, operationId, 86_400], opensOn: 'claimed' };
    const gated = gatedStatement(gate, INICIAR_PAGO, params);
    return splitGated(gate, await this.pool.query(gated.text, gated.values)).written!.rows[0];
  }

  /** The processor calls of a first attempt, as `Cobros` makes them when nothing goes wrong. */
  private async charge(pagoId: string, operationId: string, body: FloorBody): Promise<string> {
    const metadata = { pago_id: pagoId, operation_id: operationId };
    const intent = await this.gateway.createIntent({ key: processorKeyOf(operationId, INTENTO, 'create'), amount: body.monto, currency: body.moneda, metadata });
    await this.pool.query(REGISTRAR_INTENT, [pagoId, intent.id, INTENTO]);
    const confirmed = await this.gateway.confirmIntent({ key: processorKeyOf(operationId, INTENTO, 'confirm'), intentId: intent.id, paymentToken: body.token });
    // The bench pays with a card that succeeds; anything else is a broken set-up, answered as a 500.
    if (confirmed.status !== 'succeeded') throw new Error(`the processor answered ${confirmed.status} for intent ${intent.id}`);
    return intent.id;
  }
}

@Module({})
class FloorModule implements OnModuleDestroy {
  static forPool(pool: pg.Pool, gateway: PaymentGateway, apiClients: readonly ApiClient[]) {
    const providers = [{ provide: POOL, useValue: pool }, { provide: GATEWAY, useValue: gateway }, { provide: VERIFIER, useValue: new ApiTokenVerifier(apiClients) }];
    return { module: FloorModule, controllers: [FloorController], providers };
  }

  constructor(@Inject(POOL) private readonly pool: pg.Pool) {}

  async onModuleDestroy(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * Starts the floor app on `port` in this process (the bench server's), so one CPU counter covers both;
 * `gateway` is an adapter of its own on the service's processor.
 */
export async function startFloorApp(databaseUrl: string, gateway: PaymentGateway, apiClients: readonly ApiClient[], port: number): Promise<NestFastifyApplication> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_SIZE, pipeline: true } as pg.PoolConfig);
  const app = await NestFactory.create<NestFastifyApplication>(FloorModule.forPool(pool, gateway, apiClients), new FastifyAdapter(), { logger: false });
  await app.listen(port, '127.0.0.1');
  return app;
}
