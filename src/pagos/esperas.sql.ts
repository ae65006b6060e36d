/**
 * The statement of a request waiting for a payment's outcome (`GET /pagos/{id}` with `Prefer: wait`).
 */
import { PAGO_COLUMNS } from './pagos.sql.js';

/**
 * Marks payment $1 of client $2 waited on while its outcome is still to come ($3: `ESTADOS_EN_CURSO`,
 * the states the trigger watches too): only then does the `pago_decidido` trigger (migration
 * 1764700022000) notify its next change of `estado` (a NOTIFY serialises commits, so payments nobody
 * waits on send none). As MARK_KEY_WAITED for idempotency keys: the waiter watches the id first,
 * then marks, then reads the payment. Race: a decision (the route, a webhook, the reconciler) at the
 * same moment. The mark and the deciding UPDATE lock the same row:
 * - decision first: the mark waits for its commit and re-checks the WHERE on the decided row (READ
 *   COMMITTED), matching nothing; the read after it sees the decided payment.
 * - mark first: the decision's NEW row carries esperado = true, so the trigger queues the
 *   notification, delivered when that transaction commits, after the watch began.
 * Leaves `actualizado_en` alone: the reconciler's writes are conditional on it, and a waiter must
 * not make them miss. Once set it is never cleared (at worst a notification nobody waits for).
 * Returns the payment as marked: still in course, and any change from here on is notified, so the
 * waiter needs no other read. Zero rows: already marked (its next change notifies), decided, someone
 * else's or unknown: the read that follows finds out which.
 */
export const MARCAR_PAGO_ESPERADO = `
  UPDATE pagos SET esperado = true
   WHERE id = $1::uuid AND client_id = $2::text AND estado = ANY($3::text[]) AND NOT esperado
  RETURNING ${PAGO_COLUMNS}`;
