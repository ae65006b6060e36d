/**
 * Statements of the refund lifecycle: PENDIENTE → APROBADO | FALLIDO (FALLIDO → PENDIENTE on retry;
 * APROBADO → FALLIDO when the processor fails a refund later, see reembolsos-procesador.sql.ts).
 * The sum rule: `pagos.monto_reservado_reembolsos` holds what PENDIENTE and APROBADO refunds take of
 * the payment; every statement that moves a refund into or out of those states moves the counter in
 * the same statement, and a CHECK keeps it within `monto` (migration 1764700004000). The reconciler
 * reserves and leaves refunds with the shared statements of pagos/pending-versions.sql.ts.
 */
export const REEMBOLSO_COLUMNS = `
  id, pago_id AS "pagoId", client_id AS "clientId", operation_id AS "operationId", monto::text AS monto, moneda, motivo, estado,
  gateway_charge_id AS "gatewayChargeId", gateway_refund_id AS "gatewayRefundId", intento_procesador AS "intentoProcesador", creado_en AS "creadoEn", actualizado_en AS "actualizadoEn"`;

/**
 * A new operation: reserves $5 of APROBADO payment $2 of client $3 and inserts the refund PENDIENTE,
 * in one statement, before the processor is called.
 * Race: N refunds of one payment queue on its row lock; each UPDATE re-checks its WHERE against the
 * amount the previous ones committed, so the reserved total never passes `monto` (20 × 100 on 1000:
 * exactly 10 rows). Zero rows: unknown or someone else's payment, not APROBADO, or it doesn't fit
 * (REEMBOLSABLE_DE_PAGO says which). 23505 on operation_id: the operation started already, and the
 * reservation is undone with the insert.
 */
export const RESERVAR_REEMBOLSO = `
  WITH reservado AS (
    UPDATE pagos SET monto_reservado_reembolsos = monto_reservado_reembolsos + $5::bigint
     WHERE id = $2::uuid AND client_id = $3::text AND estado = 'APROBADO' AND monto_reservado_reembolsos + $5::bigint <= monto
    RETURNING id, moneda, gateway_charge_id)
  INSERT INTO reembolsos (id, pago_id, client_id, operation_id, monto, moneda, motivo, estado, gateway_charge_id)
  SELECT $1::uuid, r.id, $3::text, $4::text, $5::bigint, r.moneda, $6::text, 'PENDIENTE', r.gateway_charge_id FROM reservado r
  RETURNING ${REEMBOLSO_COLUMNS}`;

/** Why a reservation matched nothing: no row is 404; otherwise the payment's state and what it still has to refund. */
export const REEMBOLSABLE_DE_PAGO = `
  SELECT estado, (monto - monto_reservado_reembolsos)::text AS reembolsable FROM pagos WHERE id = $1::uuid AND client_id = $2::text`;

export const REEMBOLSO_POR_OPERACION = `SELECT ${REEMBOLSO_COLUMNS} FROM reembolsos WHERE operation_id = $1::text`;

/**
 * A resumed operation whose refund is PENDIENTE: renews `actualizado_en`, so that a reconciler that
 * read the old version matches nothing when it writes (as INICIAR_PAGO does for payments).
 * Zero rows: it was settled meanwhile; read it again.
 */
export const REANUDAR_REEMBOLSO_PENDIENTE = `
  UPDATE reembolsos SET actualizado_en = now() WHERE operation_id = $1::text AND estado = 'PENDIENTE'
  RETURNING ${REEMBOLSO_COLUMNS}`;

/**
 * A resumed operation whose refund had failed: FALLIDO → PENDIENTE, taking its amount from the
 * payment again, with no processor refund (the failed one was the previous attempt's). The counter's UPDATE is unconditional: when the amount no longer fits (other refunds
 * took it meanwhile) the CHECK raises 23514 and the statement is undone as a whole.
 * Race: two attempts resuming at once queue on the refund's row; the second re-checks
 * `estado = 'FALLIDO'`, matches nothing, and so reserves nothing. Zero rows: not FALLIDO any more.
 */
export const REANUDAR_REEMBOLSO_FALLIDO = `
  WITH reanudado AS (
    UPDATE reembolsos SET estado = 'PENDIENTE', gateway_refund_id = NULL, actualizado_en = now() WHERE operation_id = $1::text AND estado = 'FALLIDO'
    RETURNING ${REEMBOLSO_COLUMNS}),
  reservado AS (
    UPDATE pagos p SET monto_reservado_reembolsos = p.monto_reservado_reembolsos + r.monto::bigint FROM reanudado r WHERE p.id = r."pagoId"
    RETURNING p.id)
  SELECT reanudado.* FROM reanudado JOIN reservado ON reservado.id = reanudado."pagoId"`;

/**
 * A refund the processor accepted but has not decided (`pending`): stays PENDIENTE, now with the
 * processor's refund id $2, which the refund's webhooks and the reconciler look it up by; written
 * with the route's 202 (the key's answer) in one transaction. Renews `actualizado_en`, so that a
 * reconciler that read the old version matches nothing.
 * Race: a webhook or the reconciler deciding it first (then it is no longer PENDIENTE); a refund
 * already recorded under another id (never: one operation's attempt has one refund key).
 * Queued by the route without waiting (see `superseded_unless`, migration 1764700027000): decided
 * meanwhile, it raises SUPERSEDED_SQLSTATE and the route's transaction rolls back.
 */
export const REGISTRAR_REEMBOLSO_EN_CURSO = `
  WITH registrado AS (
    UPDATE reembolsos SET gateway_refund_id = $2::text, actualizado_en = now()
     WHERE id = $1::uuid AND estado = 'PENDIENTE' AND (gateway_refund_id IS NULL OR gateway_refund_id = $2::text)
    RETURNING 1)
  SELECT superseded_unless(EXISTS (SELECT FROM registrado), 'refund ' || $1::text || ' is no longer PENDIENTE')`;

/**
 * PENDIENTE → APROBADO with the processor's refund id $2, adding the amount to the payment's
 * `monto_reembolsado` in the same statement; only for the refund recorded as pending, if one was.
 * `guard` adds the reconciler's version condition. Whoever decides (the route, a webhook, the
 * reconciler) runs this same statement: the first one's UPDATE changes `estado`, the others re-check
 * the WHERE against it and match nothing, so the amount is added and the event recorded once.
 * Zero rows: another attempt (or the reconciler, a webhook, or a resumed attempt) settled or touched it first.
 * `result` is what it answers: the refund (a webhook, the reconciler), or for the route, which queues
 * it without waiting, nothing but SUPERSEDED_SQLSTATE raised instead of zero rows.
 */
function aprobar(guard: string, result = 'SELECT aprobado.* FROM aprobado JOIN sumado ON sumado.id = aprobado."pagoId"'): string {
  return `
  WITH aprobado AS (
    UPDATE reembolsos SET estado = 'APROBADO', gateway_refund_id = $2::text, actualizado_en = now()
     WHERE id = $1::uuid AND estado = 'PENDIENTE' AND (gateway_refund_id IS NULL OR gateway_refund_id = $2::text)${guard}
    RETURNING ${REEMBOLSO_COLUMNS}),
  sumado AS (
    UPDATE pagos p SET monto_reembolsado = p.monto_reembolsado + a.monto::bigint FROM aprobado a WHERE p.id = a."pagoId"
    RETURNING p.id)
  ${result}`;
}

/**
 * PENDIENTE → FALLIDO (the processor refunded nothing), giving the amount back to the payment in the
 * same statement, and moving to the next attempt's key (the processor may replay a failure under the
 * old one). `guard` adds the reconciler's version condition. Zero rows: settled or touched first.
 */
function fallar(guard: string): string {
  return `
  WITH fallido AS (
    UPDATE reembolsos SET estado = 'FALLIDO', intento_procesador = intento_procesador + 1, actualizado_en = now()
     WHERE id = $1::uuid AND estado = 'PENDIENTE'${guard}
    RETURNING ${REEMBOLSO_COLUMNS}),
  devuelto AS (
    UPDATE pagos p SET monto_reservado_reembolsos = p.monto_reservado_reembolsos - f.monto::bigint FROM fallido f WHERE p.id = f."pagoId"
    RETURNING p.id)
  SELECT fallido.* FROM fallido JOIN devuelto ON devuelto.id = fallido."pagoId"`;
}

/** By a webhook ($1 refund, $2 processor's refund id). */
export const APROBAR_REEMBOLSO = aprobar('');
/** By the attempt that asked the processor, queued without waiting ($1 refund, $2 processor's refund id). */
export const ASENTAR_REEMBOLSO_APROBADO = aprobar(
  '',
  `SELECT superseded_unless(EXISTS (SELECT FROM aprobado JOIN sumado ON sumado.id = aprobado."pagoId"), 'refund ' || $1::text || ' is no longer PENDIENTE')`,
);
/** By the attempt whose processor call failed ($1 refund). */
export const FALLAR_REEMBOLSO = fallar('');
/**
 * By the reconciler, at its reservation's version ($3 resp. $2): a resumed attempt renews the
 * version first (REANUDAR_REEMBOLSO_PENDIENTE), and then this matches nothing, so the attempt's
 * own outcome stands.
 */
export const CONCILIAR_REEMBOLSO_APROBADO = aprobar(' AND actualizado_en = $3::timestamptz');
export const CONCILIAR_REEMBOLSO_FALLIDO = fallar(' AND actualizado_en = $2::timestamptz');

/** Refunds PENDIENTE and untouched for at least $1 seconds, $3 at a time in id order after $2 (see PAGOS_PENDIENTES_DESDE). */
export const REEMBOLSOS_PENDIENTES_DESDE = `
  SELECT ${REEMBOLSO_COLUMNS}, actualizado_en::text AS version FROM reembolsos
   WHERE estado = 'PENDIENTE' AND actualizado_en <= now() - make_interval(secs => $1::int) AND id > $2::uuid
   ORDER BY id
   LIMIT $3::int`;

/** A payment's refunds, oldest first; only the client's own. */
export const REEMBOLSOS_DE_PAGO = `
  SELECT ${REEMBOLSO_COLUMNS} FROM reembolsos WHERE pago_id = $1::uuid AND client_id = $2::text ORDER BY creado_en, id LIMIT $3::int`;

export const REEMBOLSO_DE_PAGO = `
  SELECT ${REEMBOLSO_COLUMNS} FROM reembolsos WHERE id = $1::uuid AND pago_id = $2::uuid AND client_id = $3::text`;
