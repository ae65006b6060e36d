import { Injectable } from '@nestjs/common';

/**
 * What the reconciler did with one abandoned payment (or one waiting for its customer):
 * - approved / declined: the processor had charged / declined it; the payment and its key are settled.
 * - failed: the processor has no charge for it; FALLIDO, the order is free and the key released.
 * - awaiting_authentication: the intent waits for the customer's 3-D Secure; the key gets the 202.
 * - authentication_abandoned: the customer never authenticated in time; the intent was canceled.
 * - unreachable: the processor could not be asked; nothing changed, the next pass tries again.
 * - skipped: the processor answered something about this row that can't be acted on (a failure it
 *   keeps under a key, an object it doesn't know); logged, left as it was, and the pass goes on.
 */
export const RECONCILE_RESULTS = [
  'approved',
  'declined',
  'failed',
  'awaiting_authentication',
  'authentication_abandoned',
  'unreachable',
  'skipped',
] as const;
export type ReconcileResult = (typeof RECONCILE_RESULTS)[number];

/** Where the payments feature reports what its jobs did, so that metrics can count it without `pagos/` knowing about them. */
@Injectable()
export class PagosEvents {
  private readonly reconciledListeners: Array<(result: ReconcileResult) => void> = [];
  private readonly runListeners: Array<(ok: boolean) => void> = [];

  onReconciled(listener: (result: ReconcileResult) => void): void {
    this.reconciledListeners.push(listener);
  }

  onReconcileRun(listener: (ok: boolean) => void): void {
    this.runListeners.push(listener);
  }

  reconciled(result: ReconcileResult): void {
    for (const listener of this.reconciledListeners) listener(result);
  }

  reconcileRun(ok: boolean): void {
    for (const listener of this.runListeners) listener(ok);
  }
}
