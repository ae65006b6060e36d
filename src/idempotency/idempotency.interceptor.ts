import {
  type CallHandler, type ExecutionContext, HttpException, Inject, Injectable, Logger, type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { randomUUID } from 'node:crypto';
import { attachJoinableCommit } from '../database/joinable-commit.decorator.js';
import { isSuperseded } from '../database/postgres-errors.js';
import { type DeferredCommit, Transactions } from '../database/transactions.js';
import { headerLines } from '../http/header-lines.js';
import { rawBodyOf } from '../http/json-body.parser.js';
import { fingerprintRequest } from './fingerprint.js';
import {
  IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_OPTIONS, IDEMPOTENT_REPLAYED_HEADER, IDEMPOTENT_ROUTE, type IdempotentRouteOptions, REPLAYED_RESPONSE_HEADERS,
} from './idempotency.constants.js';
import {
  IdempotencyClaimLostError, IdempotencyKeyInFlightError, IdempotencyKeyInvalidError, IdempotencyKeyReusedError,
} from './idempotency.errors.js';
import { IdempotencyEvents, type IdempotencyOutcome } from './idempotency.events.js';
import { InFlightWaiter } from './in-flight-waiter.js';
import type { IdempotencyOptions } from './idempotency.options.js';
import { IdempotencyStore, isClaimLost } from './idempotency.store.js';
import type { Claim, ClaimOrigin, ClaimOutcome, KeyRequest, StoredResponse } from './idempotency.types.js';
import { parseIdempotencyKey } from './idempotency-key.js';
import { LeaseKeeper } from './lease-keeper.js';
import { ReplayCache, type SentRequest } from './replay-cache.js';
import { attachOperationId } from './operation-id.decorator.js';
import { isTransientClientError, storedJson, storedProblem } from './stored-response.js';

const IDEMPOTENCY_KEY_LINE = IDEMPOTENCY_KEY_HEADER.toLowerCase();
const OUTCOME_OF_CLAIM: Record<ClaimOrigin, IdempotencyOutcome> = { new_key: 'executed', expired_key: 'expired', takeover: 'lock_recovered' };

/** What a claim made with the handler's first write found, and the handler's run when that claim is ours. */
interface FirstWriteClaim {
  readonly outcome: ClaimOutcome;
  readonly running?: Promise<StoredResponse>;
}

/**
 * Runs an `@Idempotent()` handler at most once per key: claims the key first, stores the answer in
 * the transaction of the handler's last write, and replays it for every later request with that key
 * (its next retries from this process's memory, see {@link ReplayCache}, before any validation: the
 * same bytes passed it when the key was read).
 * Failures of our own (5xx) and transient conflicts (a 4xx with `Retry-After`) are not stored: the
 * claim is released so a retry can run again. A duplicate of a key in flight may wait for its answer
 * first (see {@link InFlightWaiter}).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger(IdempotencyInterceptor.name);

  constructor(
    private readonly reflector: Reflector,
    private readonly store: IdempotencyStore,
    private readonly transactions: Transactions,
    private readonly events: IdempotencyEvents,
    private readonly waiter: InFlightWaiter,
    private readonly replays: ReplayCache,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const route = this.reflector.get<IdempotentRouteOptions | undefined>(IDEMPOTENT_ROUTE, context.getHandler());
    if (!route) return next.handle();
    // A promise, not a subscription: the work finishes and is stored even if the client goes away.
    return from(this.handle(context, next, route));
  }

  private async handle(context: ExecutionContext, next: CallHandler, route: IdempotentRouteOptions): Promise<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const response = http.getResponse<FastifyReply>();
    const { scope, key } = this.keyOf(request);
    const sent = sentRequestOf(request);
    const cached = this.replays.find(scope, key, sent);
    if (cached) {
      this.events.outcome(request, 'replayed');
      return replay(response, cached);
    }
    await this.options.validateRequest?.(context);
    const fingerprint = fingerprintRequest({ method: sent.method, target: sent.target, body: request.body });
    const keyRequest: KeyRequest = { scope, key, fingerprint };
    const first = route.claimWithFirstWrite ? await this.claimWithFirstWrite(keyRequest, request, response, next) : undefined;
    const claimed = first?.outcome ?? (await this.store.claimKey(keyRequest));
    const { outcome, waitedSeconds } =
      claimed.kind === 'in_flight' ? await this.waiter.waitForSettled(keyRequest, request, response) : { outcome: claimed, waitedSeconds: undefined };
    const report = (name: IdempotencyOutcome): void => {
      this.events.outcome(request, name);
      if (waitedSeconds !== undefined) this.events.waited({ outcome: name, seconds: waitedSeconds });
    };
    switch (outcome.kind) {
      case 'claimed':
        report(OUTCOME_OF_CLAIM[outcome.origin]);
        return this.execute(outcome.claim, request, response, next, first?.running);
      case 'replay':
        report(waitedSeconds === undefined ? 'replayed' : 'waited_replay');
        this.replays.remember(keyRequest, sent, outcome.response, outcome.expiresInSeconds);
        return replay(response, outcome.response);
      case 'mismatch':
        report('mismatch');
        throw new IdempotencyKeyReusedError();
      case 'in_flight':
        report(waitedSeconds === undefined ? 'in_flight_conflict' : 'wait_timeout');
        throw new IdempotencyKeyInFlightError();
      default:
        return assertNever(outcome);
    }
  }

  private keyOf(request: FastifyRequest): { scope: string; key: string } {
    const lines = headerLines(request.raw, IDEMPOTENCY_KEY_LINE);
    // No line is undefined, one line its value, more are refused by the parser.
    const parsed = parseIdempotencyKey(lines.length <= 1 ? lines[0] : lines);
    if (!parsed.ok) throw new IdempotencyKeyInvalidError(parsed.reason);
    return { scope: this.options.scopeOf(request), key: parsed.key };
  }

  /**
   * Claims the key with the handler's first write (see IdempotentRouteOptions): the handler starts at
   * once, and its first write goes out as one statement with the claim, which runs it only if the
   * claim wins. A claim that is ours comes back with that run. Otherwise the run is void: a live
   * key's outcome (replay, mismatch, in flight, takeover) comes back, its write never made. When the
   * key was free but the write failed, the claim went with it: the error is the answer, and no key is
   * left behind. When the handler sent nothing, nothing comes back, for the usual claim to decide.
   */
  private async claimWithFirstWrite(keyRequest: KeyRequest, request: FastifyRequest, response: FastifyReply, next: CallHandler): Promise<FirstWriteClaim | undefined> {
    const claim: Claim = { ...keyRequest, lockToken: randomUUID(), operationId: randomUUID(), resumed: false };
    const commit = this.transactions.openDeferredCommit();
    const { gateRow } = commit.startWith(this.store.claimGate(claim));
    const claiming = gateRow.then((row) => this.store.outcomeOfGate(claim, row));
    attachOperationId(request, claim.operationId);
    attachJoinableCommit(request, commit);
    const running = this.runWithClaim(claim, commit, response, next);
    const failure = running.then(() => undefined, (error: unknown) => ({ error }));
    if (await commit.gatePassed) return { outcome: (await claiming)!, running };
    const [outcome, failed] = await Promise.all([claiming, failure]);
    this.clearHandlerHeaders(response);
    const ours = outcome?.kind === 'claimed' && outcome.claim.lockToken === claim.lockToken;
    if (outcome && !ours) return { outcome };
    if (failed && !commit.hasUnsentGate) throw failed.error;
    return undefined;
  }

  /** The handler's run with the claim as the gate of its first write; its answer is stored only if that claim committed. */
  private async runWithClaim(claim: Claim, commit: DeferredCommit, response: FastifyReply, next: CallHandler): Promise<StoredResponse> {
    try {
      const answer = await this.runHandler(response, next);
      // A handler that ended without writing sent no claim: nothing was claimed.
      if (commit.hasUnsentGate) await commit.rollback();
      if (await commit.gatePassed) await this.complete(commit, claim, answer);
      else await commit.rollback();
      return answer;
    } catch (error) {
      await commit.rollback();
      throw error;
    }
  }

  private async execute(claim: Claim, request: FastifyRequest, response: FastifyReply, next: CallHandler, running?: Promise<StoredResponse>): Promise<unknown> {
    attachOperationId(request, claim.operationId);
    const lease = new LeaseKeeper(this.store, claim, this.options.lockTimeoutSeconds);
    try {
      const answer = await (running ?? this.runAndComplete(claim, request, response, next)).catch((error: unknown) => {
        if (!isSuperseded(error)) throw error;
        // A write the handler queued found its state moved on (another process wrote first) and it all
        // rolled back: the handler runs once more, from what is there now, as any retry would.
        this.logger.log(`key ${claim.key}: the handler's last write was superseded (${(error as Error).message}); running it again`);
        this.clearHandlerHeaders(response);
        return this.runAndComplete(claim, request, response, next);
      });
      return send(response, answer);
    } catch (error) {
      await this.releaseQuietly(claim);
      // The problem answers for this attempt: nothing the handler set (the Location of a rolled-back row) goes with it.
      this.clearHandlerHeaders(response);
      throw error;
    } finally {
      lease.stop();
    }
  }

  /** Runs the handler and stores its answer with COMMIT, in the transaction its last write joined. */
  private async runAndComplete(claim: Claim, request: FastifyRequest, response: FastifyReply, next: CallHandler): Promise<StoredResponse> {
    const commit = this.transactions.openDeferredCommit();
    attachJoinableCommit(request, commit);
    try {
      const answer = await this.runHandler(response, next);
      await this.complete(commit, claim, answer);
      return answer;
    } catch (error) {
      await commit.rollback();
      throw error;
    }
  }

  /** The completion travels with COMMIT; a lost claim aborts it, and the handler's joined writes with it. */
  private async complete(commit: DeferredCommit, claim: Claim, answer: StoredResponse): Promise<void> {
    await commit.commitWith((db) => this.store.completeKey(db, claim, answer)).catch((error: unknown) => {
      throw isClaimLost(error) ? new IdempotencyClaimLostError() : error;
    });
  }

  private clearHandlerHeaders(response: FastifyReply): void {
    for (const name of REPLAYED_RESPONSE_HEADERS) if (name !== 'content-type') response.removeHeader(name);
  }

  /**
   * The handler's answer as it will be stored: its value, or the problem of an expected (4xx) failure.
   * Our own failures and transient conflicts are thrown instead: nothing is stored for them.
   */
  private async runHandler(response: FastifyReply, next: CallHandler): Promise<StoredResponse> {
    try {
      const value = await lastValueFrom(next.handle(), { defaultValue: undefined });
      return storedJson(response.statusCode, value, replayedHeaders(response));
    } catch (error) {
      if (!isClientError(error) || isTransientClientError(error)) throw error;
      const answer = storedProblem(error, replayedHeaders(response));
      response.status(answer.status);
      return answer;
    }
  }

  private async releaseQuietly(claim: Claim): Promise<void> {
    try {
      await this.store.releaseKey(claim);
    } catch (error) {
      // The lease runs out on its own; a retry takes the claim over after the lock timeout.
      this.logger.warn(`could not release key ${claim.key}: ${(error as Error).message}`);
    }
  }
}

function isClientError(error: unknown): error is HttpException {
  return error instanceof HttpException && error.getStatus() < 500;
}

/** The headers worth replaying that the handler set; the content type is the stored body's own. */
function replayedHeaders(response: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_RESPONSE_HEADERS) {
    const value = response.getHeader(name);
    if (name !== 'content-type' && typeof value === 'string') headers[name] = value;
  }
  return headers;
}

function sentRequestOf(request: FastifyRequest): SentRequest {
  return { method: request.method, target: request.originalUrl, body: rawBodyOf(request) };
}

function replay(response: FastifyReply, stored: StoredResponse): string {
  response.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
  return send(response, stored);
}

/** Sends the stored bytes: Fastify writes a string body as is when its content type is set. */
function send(response: FastifyReply, stored: StoredResponse): string {
  response.status(stored.status).headers(stored.headers);
  return stored.body;
}

function assertNever(value: never): never {
  throw new Error(`unexpected idempotency outcome ${JSON.stringify(value)}`);
}
