import { Session } from 'node:inspector/promises';
import { Body, Controller, Get, HttpCode, HttpStatus, Module, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AuthenticatedClient } from '../src/auth/authenticated-client.js';
import { Public } from '../src/auth/public.decorator.js';
import { IdempotencyPurgeJob } from '../src/idempotency/idempotency-purge.job.js';
import { CrearPagoDto } from '../src/pagos/dto/crear-pago.dto.js';
import { type PagoResponse, toPagoResponse } from '../src/pagos/dto/pago.response.js';
import { PagosModule } from '../src/pagos/pagos.module.js';
import { PagosService } from '../src/pagos/pagos.service.js';
import { RateLimited } from '../src/rate-limit/rate-limited.decorator.js';
import { RequestTally } from './request-tally.js';

export const ROUND_TRIPS = Symbol('ROUND_TRIPS');

/** Bench-only routes; never part of the service. */
@Controller('bench')
export class BenchController {
  constructor(
    private readonly pagos: PagosService,
    private readonly purgeJob: IdempotencyPurgeJob,
  ) {}

  /** The baseline: the same business write as POST /pagos, without @Idempotent(). */
  @Post('pagos-sin-idempotencia')
  @RateLimited()
  @HttpCode(HttpStatus.CREATED)
  async crear(
    @Body({ schema: CrearPagoDto }) dto: CrearPagoDto,
    @AuthenticatedClient() clientId: string,
    @Res({ passthrough: true }) response: FastifyReply,
  ): Promise<PagoResponse> {
    const pago = await this.pagos.crear({ ...dto, clientId, operationId: undefined });
    response.header('Location', `/pagos/${pago.id}`);
    return toPagoResponse(pago);
  }

  /** PostgreSQL statements sent, CPU time used and requests received by this process so far. */
  @Public()
  @Get('counters')
  counters(): BenchCounters {
    const { user, system } = process.cpuUsage();
    const { requests } = benchState;
    return { roundTrips: benchState.roundTrips(), cpuMicros: user + system, requests: requests.received, unanswered: requests.unanswered };
  }

  /** Starts V8's CPU profiler in this process (`npm run bench -- --profile`). */
  @Public()
  @Post('profile/start')
  @HttpCode(HttpStatus.NO_CONTENT)
  async startProfile(): Promise<void> {
    profiler.session ??= new Session();
    profiler.session.connect();
    await profiler.session.post('Profiler.enable');
    await profiler.session.post('Profiler.start');
  }

  /** Stops the profiler and answers the profile (.cpuprofile JSON, as Chrome DevTools reads it). */
  @Public()
  @Post('profile/stop')
  @HttpCode(HttpStatus.OK)
  async stopProfile(): Promise<unknown> {
    const session = profiler.session!;
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    return profile;
  }

  @Public()
  @Post('purge')
  @HttpCode(HttpStatus.OK)
  async purge(): Promise<{ purged: number; ms: number }> {
    const started = performance.now();
    const purged = await this.purgeJob.purgeOnce();
    return { purged, ms: Math.round(performance.now() - started) };
  }
}

export const benchState = { roundTrips: (): number => 0, requests: new RequestTally() };

const profiler: { session?: Session } = {};

export interface BenchCounters {
  readonly roundTrips: number;
  readonly cpuMicros: number;
  /** By the service and the floor app, the bench's readings of these counters left out. */
  readonly requests: number;
  /** Received and not answered yet: work still going on. */
  readonly unanswered: number;
}

@Module({ imports: [PagosModule], controllers: [BenchController] })
export class BenchModule {}
