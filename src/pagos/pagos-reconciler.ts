import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource, type EntityManager } from 'typeorm';
import type { AppConfigService } from '../config/app-config.js';
import { queryRows } from '../database/query-rows.js';
import { Transactions } from '../database/transactions.js';
import { type Charge, PAYMENT_GATEWAY, type PaymentGateway } from '../gateway/payment-gateway.js';
import { IdempotencyStore } from '../idempotency/idempotency.store.js';
import type { Claim } from '../idempotency/idempotency.types.js';
import { chargeKeyOf, type EstadoPago, type Pago } from './pago.entity.js';
import { storedAnswerOf } from './pago-answers.js';
import { type PagoRow, toPago } from './pago-row.js';
import { PagosEvents, type ReconcileResult } from './pagos.events.js';
import { CONCILIAR_PAGO, CONTAR_PENDIENTES_DESDE, DEVOLVER_PAGO_PENDIENTE, PAGOS_PENDIENTES_DESDE, RESERVAR_PAGO_PENDIENTE } from './pagos.sql.js';

/** A PENDIENTE payment as read, with the version (`actualizado_en`) every later write is conditional on. */
export interface PagoPendiente {
  readonly pago: Pago;
  readonly version: string;
}

/** One payment a pass settled (or could not ask the processor about). */
export interface Reconciled {
  readonly pago: Pago;
  readonly result: ReconcileResult;
}

// 100 payments per read and at most 10 reads a pass: a pass never runs for long, the next one goes on.
const BATCH_SIZE = 100;
const MAX_BATCHES_PER_PASS = 10;
const BEFORE_ANY_ID = '00000000-0000-0000-0000-000000000000';

// What a settlement attempt may find besides a result: a live attempt holds the operation, or
// somebody else (a retry, another replica) settled or resumed it between our read and our write.
type Attempt = ReconcileResult | 'held' | 'lost';

class ClaimLostError extends Error {}

/**
 * Settles payments their clients abandoned: PENDIENTE for longer than the lock timeout while no live
 * attempt holds their operation. It takes the operation's claim over (fenced like any takeover), asks
 * the processor about the charge key, and writes the payment's final state together with the key's
 * answer — the one the route would have given — or, when nothing was charged, FALLIDO and the key
 * released. Safe with any number of replicas: every write is conditional (see pagos.sql.ts).
 */
@Injectable()
export class PagosReconciler {
  private readonly logger = new Logger(PagosReconciler.name);
  private readonly lockTimeoutSeconds: number;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly idempotency: IdempotencyStore,
    @Inject(PAYMENT_GATEWAY) private readonly gateway: PaymentGateway,
    private readonly events: PagosEvents,
    @Inject(ConfigService) config: AppConfigService,
  ) {
    this.lockTimeoutSeconds = config.get('idempotency', { infer: true }).lockTimeoutSeconds;
  }

  /** One pass over the stale PENDIENTE payments; stops early when the processor can't be reached. */
  async reconcileOnce(): Promise<Reconciled[]> {
    const done: Reconciled[] = [];
    let after = BEFORE_ANY_ID;
    for (let batch = 0; batch < MAX_BATCHES_PER_PASS; batch++) {
      const pending = await this.stalePending(this.lockTimeoutSeconds, after, BATCH_SIZE);
      for (const candidate of pending) {
        const result = await this.settle(candidate);
        if (result === 'held' || result === 'lost') continue;
        this.events.reconciled(result);
        done.push({ pago: candidate.pago, result });
        // Every other payment would wait on the same processor: the next pass tries them all again.
        if (result === 'unreachable') return done;
      }
      if (pending.length < BATCH_SIZE) break;
      after = pending.at(-1)!.pago.id;
    }
    return done;
  }

  /** PENDIENTE payments untouched for `olderThanSeconds`, in id order after `after`. */
  async stalePending(olderThanSeconds: number, after = BEFORE_ANY_ID, limit = BATCH_SIZE): Promise<PagoPendiente[]> {
    const rows = await queryRows<PagoRow & { version: string }>(this.dataSource.manager, PAGOS_PENDIENTES_DESDE, [olderThanSeconds, after, limit]);
    return rows.map(({ version, ...row }) => ({ pago: toPago(row), version }));
  }

  /** Payments PENDIENTE for longer than the lock timeout: what is waiting for a pass (or stuck). */
  async countStalePending(): Promise<number> {
    const [row] = await queryRows<{ n: number }>(this.dataSource.manager, CONTAR_PENDIENTES_DESDE, [this.lockTimeoutSeconds]);
    return row!.n;
  }

  private async settle({ pago, version }: PagoPendiente): Promise<Attempt> {
    const [reserved] = await queryRows<{ version: string }>(this.dataSource.manager, RESERVAR_PAGO_PENDIENTE, [pago.id, version]);
    if (!reserved) return 'lost';
    const operation = await this.idempotency.takeOverStaleOperation(pago.operationId);
    if (operation.kind === 'held') {
      await this.leaveAsFound(pago, reserved.version, version);
      return 'held';
    }
    const claim = operation.kind === 'taken' ? operation.claim : undefined;
    let charge: Charge | undefined;
    try {
      charge = await this.gateway.findCharge(chargeKeyOf(pago.operationId));
    } catch (error) {
      this.logger.warn(`pago ${pago.id}: the processor could not be asked about its charge (${(error as Error).message}); next pass`);
      if (claim) await this.idempotency.releaseKey(claim);
      await this.leaveAsFound(pago, reserved.version, version);
      return 'unreachable';
    }
    const settled = await this.write(pago, reserved.version, estadoOf(charge), charge?.id ?? null, claim);
    if (!settled) return 'lost';
    this.logger.log(`pago ${pago.id} reconciled as ${settled.estado} (operation ${pago.operationId}, client ${pago.clientId}, order ${pago.numeroOrden})`);
    return resultOf(settled.estado);
  }

  /** Gives the reservation back, so that the next pass looks at the payment again. */
  private async leaveAsFound(pago: Pago, reserved: string, found: string): Promise<void> {
    await queryRows(this.dataSource.manager, DEVOLVER_PAGO_PENDIENTE, [pago.id, reserved, found]);
  }

  /** The payment's final state and its key's settlement in one transaction; undefined when another writer came first. */
  private async write(pago: Pago, version: string, estado: EstadoPago, chargeId: string | null, claim: Claim | undefined): Promise<Pago | undefined> {
    try {
      const settled = await this.transactions.run(async (manager) => {
        const [row] = await queryRows<PagoRow>(manager, CONCILIAR_PAGO, [pago.id, estado, chargeId, version]);
        if (!row) return undefined;
        const cerrado = toPago(row);
        if (claim && !(await this.settleClaim(manager, claim, cerrado))) throw new ClaimLostError();
        return cerrado;
      });
      // Somebody resumed or settled the payment first: the claim we took is theirs to decide again.
      if (!settled && claim) await this.idempotency.releaseKey(claim);
      return settled;
    } catch (error) {
      if (error instanceof ClaimLostError) return undefined;
      throw error;
    }
  }

  /** Approved or declined: the key gets the route's answer. Nothing charged: the key is released, so a retry runs again. */
  private settleClaim(manager: EntityManager, claim: Claim, pago: Pago): Promise<boolean> {
    if (pago.estado === 'FALLIDO') return this.idempotency.releaseKey(claim, manager);
    return this.idempotency.completeKey(manager, claim, storedAnswerOf(pago));
  }
}

function estadoOf(charge: Charge | undefined): EstadoPago {
  if (!charge) return 'FALLIDO';
  return charge.outcome === 'approved' ? 'APROBADO' : 'RECHAZADO';
}

const RESULT_OF_ESTADO: Partial<Record<EstadoPago, ReconcileResult>> = { APROBADO: 'approved', RECHAZADO: 'declined', FALLIDO: 'failed' };

function resultOf(estado: EstadoPago): ReconcileResult {
  return RESULT_OF_ESTADO[estado]!;
}
