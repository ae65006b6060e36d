import { REEMBOLSO_COLUMNS } from './reembolsos.sql.js';

/**
 * Statements of what the processor decides after it answered: a pending refund that settles, a
 * refund that fails after it was accepted. Whoever learns it (a webhook, the reconciler, the route)
 * writes it with a conditional statement; the sum rule holds as in reembolsos.sql.ts.
 */

/** Our refund for the processor's refund $1 (a webhook names only that); index `reembolsos_gateway_refund_id_uidx`. */
export const REEMBOLSO_POR_REFUND_PROCESADOR = `SELECT ${REEMBOLSO_COLUMNS} FROM reembolsos WHERE gateway_refund_id = $1::text`;

/**
 * Locks refund $1 until the transaction ends, before FALLAR_REEMBOLSO_EN_PROCESADOR: that statement
 * moves the payment's counters by the state the refund is in, and in READ COMMITTED only a statement
 * that starts after the lock is held reads the state (and the payment's counters) that a concurrent
 * decider committed. Within one statement, a row lock waited for in a CTE re-reads the refund but
 * not what its decider wrote to the payment: an approval committed meanwhile then looked PENDIENTE
 * and the CHECK refused the result (the race test found this).
 */
export const BLOQUEAR_REEMBOLSO = `SELECT estado FROM reembolsos WHERE id = $1::uuid FOR UPDATE`;

/**
 * PENDIENTE or APROBADO → FALLIDO: the processor's refund $2 failed (or was canceled) after it had
 * accepted it. Run after BLOQUEAR_REEMBOLSO in the same transaction. The amount goes back to the
 * payment in the same statement: out of the reservation always, and out of `monto_reembolsado` too
 * when it had counted as refunded (APROBADO). Moves to the next attempt's key, as every failure does
 * (a resumed operation must never reuse a key whose refund failed).
 * Race: the webhook's events of one failure (`refund.updated`, `refund.failed`,
 * `charge.refund.updated`, redeliveries), the reconciler, and the route approving the same refund
 * from an answer given before it failed. They queue on the refund's row lock; each then reads the
 * state the previous one committed, so the counters move by what that state held, and only the
 * first decider gets a row.
 * Zero rows: already FALLIDO, not this refund's row, or not recorded with this refund (yet).
 */
export const FALLAR_REEMBOLSO_EN_PROCESADOR = `
  WITH antes AS (
    SELECT id AS reembolso_id, estado AS anterior FROM reembolsos
     WHERE id = $1::uuid AND gateway_refund_id = $2::text AND estado IN ('PENDIENTE', 'APROBADO')),
  fallido AS (
    UPDATE reembolsos r SET estado = 'FALLIDO', intento_procesador = r.intento_procesador + 1, actualizado_en = now()
      FROM antes WHERE r.id = antes.reembolso_id AND r.estado = antes.anterior
    RETURNING ${REEMBOLSO_COLUMNS}, antes.anterior),
  devuelto AS (
    UPDATE pagos p SET monto_reservado_reembolsos = p.monto_reservado_reembolsos - f.monto::bigint,
                       monto_reembolsado = p.monto_reembolsado - CASE WHEN f.anterior = 'APROBADO' THEN f.monto::bigint ELSE 0 END
      FROM fallido f WHERE p.id = f."pagoId"
    RETURNING p.id)
  SELECT fallido.* FROM fallido JOIN devuelto ON devuelto.id = fallido."pagoId"`;
