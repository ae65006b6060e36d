import { randomUUID } from 'node:crypto';
import type { PagoRequest, PagosAnswer, PagosClient } from './pagos-client.js';
import type { PendingOperation, PendingOperationsFile } from './pending-operations.js';
import type { RetryPolicy } from './retry-policy.js';
import { type RetryEnvironment, type RetryOutcome, sendWithRetries } from './send-with-retries.js';

export interface PayDependencies extends RetryEnvironment<PagosAnswer> {
  readonly client: PagosClient;
  readonly pending: PendingOperationsFile;
  readonly policy: RetryPolicy;
}

export interface PayOutcome extends RetryOutcome<PagosAnswer> {
  readonly idempotencyKey: string;
  /** True when the operation was already pending (an earlier run never got its final answer). */
  readonly resumed: boolean;
}

/** Thrown when an order's unresolved payment was for a different request: paying it anew could charge twice. */
export class DifferentPendingPaymentError extends Error {
  constructor(readonly operation: PendingOperation) {
    super(
      `order ${operation.pago.numeroOrden} has an unresolved payment (${JSON.stringify(operation.pago)}, key ${operation.idempotencyKey}); ` +
        'resume it before paying the order differently',
    );
  }
}

/**
 * Pays an order the way a mobile app should: one Idempotency-Key per operation, on disk before the
 * first attempt, reused by every retry and by the next run if this one dies or gives up; forgotten
 * only once a final answer arrived.
 *
 * @example
 * const outcome = await pay({ numeroOrden: 'ORD-1', monto: 1999, moneda: 'EUR', token: 'tok_visa' }, { client, pending, policy });
 */
export async function pay(pago: PagoRequest, dependencies: PayDependencies): Promise<PayOutcome> {
  const earlier = dependencies.pending.find(pago.numeroOrden);
  if (earlier && !samePago(earlier.pago, pago)) throw new DifferentPendingPaymentError(earlier);
  const operation = earlier ?? { idempotencyKey: randomUUID(), pago, createdAt: new Date().toISOString() };
  if (!earlier) dependencies.pending.remember(operation);
  return { ...(await settle(operation, dependencies)), resumed: earlier !== undefined };
}

/** Retries every pending operation, as an app does on launch. */
export async function resumePending(dependencies: PayDependencies): Promise<PayOutcome[]> {
  const outcomes: PayOutcome[] = [];
  for (const operation of dependencies.pending.list()) outcomes.push({ ...(await settle(operation, dependencies)), resumed: true });
  return outcomes;
}

async function settle(operation: PendingOperation, dependencies: PayDependencies): Promise<Omit<PayOutcome, 'resumed'>> {
  const { client, pending, policy, ...environment } = dependencies;
  const outcome = await sendWithRetries(() => client.postPago(operation.idempotencyKey, operation.pago), policy, environment);
  if (outcome.final) pending.forget(operation.pago.numeroOrden);
  return { ...outcome, idempotencyKey: operation.idempotencyKey };
}

function samePago(a: PagoRequest, b: PagoRequest): boolean {
  return a.numeroOrden === b.numeroOrden && a.monto === b.monto && a.moneda === b.moneda && a.token === b.token;
}
