import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfigService } from '../config/app-config.js';
import { type AbandonedOperationKind, AbandonedOperations, type PendingOperation } from './abandoned-operations.js';
import { AutenticacionesPendientes } from './autenticaciones-pendientes.js';
import type { ReconcileResult } from './pagos.events.js';
import { PagosAbandonados } from './pagos-abandonados.js';

/** One operation a pass settled (or could not ask the processor about). */
export interface Reconciled {
  readonly pending: PendingOperation<unknown>;
  readonly result: ReconcileResult;
}

// 100 rows per read and at most 10 reads per kind and pass: a pass never runs for long, the next one goes on.
const BATCH_SIZE = 100;
const MAX_BATCHES_PER_PASS = 10;
const BEFORE_ANY_ID = '00000000-0000-0000-0000-000000000000';

type AnyKind = AbandonedOperationKind<unknown, unknown>;

/**
 * Settles operations their clients abandoned: PENDIENTE for longer than the lock timeout while no
 * live attempt holds their operation. Payments first, then every kind another feature registered
 * (refunds), each through {@link AbandonedOperations}. Safe with any number of replicas.
 */
@Injectable()
export class PagosReconciler {
  private readonly lockTimeoutSeconds: number;
  private readonly kinds: AnyKind[];

  constructor(
    private readonly operations: AbandonedOperations,
    private readonly pagos: PagosAbandonados,
    private readonly autenticaciones: AutenticacionesPendientes,
    @Inject(ConfigService) config: AppConfigService,
  ) {
    this.lockTimeoutSeconds = config.get('idempotency', { infer: true }).lockTimeoutSeconds;
    this.kinds = [pagos as AnyKind];
  }

  /** Adds a kind of operation to every later pass (a feature module registers its own at start-up). */
  register<Item, Found>(kind: AbandonedOperationKind<Item, Found>): void {
    this.kinds.push(kind as AnyKind);
  }

  /**
   * One pass over the stale PENDIENTE operations of every kind, then the payments waiting for their
   * customer; stops early when the processor can't be reached.
   */
  async reconcileOnce(): Promise<Reconciled[]> {
    const done: Reconciled[] = [];
    for (const kind of this.kinds) {
      if (!(await this.pass(kind, done))) return done;
    }
    for (const { pago, result } of await this.autenticaciones.reconcileOnce(this.lockTimeoutSeconds)) {
      this.pagos.report(result);
      done.push({ pending: this.pagos.pendingOf(pago), result });
    }
    return done;
  }

  /** PENDIENTE operations of every kind untouched for `olderThanSeconds`, up to `limit` of each. */
  async stalePending(olderThanSeconds: number, limit = BATCH_SIZE): Promise<Array<PendingOperation<unknown>>> {
    const lists = await Promise.all(this.kinds.map((kind) => kind.stale(olderThanSeconds, BEFORE_ANY_ID, limit)));
    return lists.flat();
  }

  /** Payments PENDIENTE for longer than the lock timeout: what is waiting for a pass (or stuck). */
  countStalePending(): Promise<number> {
    return this.pagos.count(this.lockTimeoutSeconds);
  }

  /** One kind's share of a pass; false when the processor was unreachable (every other row would wait on it too). */
  private async pass(kind: AnyKind, done: Reconciled[]): Promise<boolean> {
    let after = BEFORE_ANY_ID;
    for (let batch = 0; batch < MAX_BATCHES_PER_PASS; batch++) {
      const pending = await kind.stale(this.lockTimeoutSeconds, after, BATCH_SIZE);
      for (const candidate of pending) {
        const result = await this.operations.settle(kind, candidate);
        if (result === 'held' || result === 'lost') continue;
        kind.report(result);
        done.push({ pending: candidate, result });
        if (result === 'unreachable') return false;
      }
      if (pending.length < BATCH_SIZE) break;
      after = pending.at(-1)!.id;
    }
    return true;
  }
}
