/** Statements of the payment lifecycle: PENDIENTE → APROBADO | RECHAZADO | FALLIDO (→ PENDIENTE on retry). */

export const PAGO_COLUMNS = `
  id, client_id AS "clientId", operation_id AS "operationId", numero_orden AS "numeroOrden", monto::text AS monto,
  moneda, estado, gateway_charge_id AS "gatewayChargeId", creado_en AS "creadoEn", actualizado_en AS "actualizadoEn"`;

/**
 * Starts (or resumes) the payment of one operation before anything is charged.
 * New operation: inserts PENDIENTE; the partial unique index on (client, order) raises 23505 when
 * another operation already holds the order (PENDIENTE or APROBADO), so two keys can't both charge it.
 * Retried operation whose charge failed: FALLIDO → PENDIENTE. Any other state returns no row.
 * `nuevo` is true only for a fresh insert: a resumed operation must ask the gateway what it did.
 */
export const INICIAR_PAGO = `
  INSERT INTO pagos AS p (id, client_id, operation_id, numero_orden, monto, moneda, estado)
  VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::bigint, $6::char(3), 'PENDIENTE')
  ON CONFLICT (operation_id) DO UPDATE SET estado = 'PENDIENTE', actualizado_en = now()
   WHERE p.estado = 'FALLIDO'
  RETURNING ${PAGO_COLUMNS}, (xmax = 0) AS nuevo`;

export const PAGO_POR_OPERACION = `SELECT ${PAGO_COLUMNS} FROM pagos WHERE operation_id = $1::text`;

export const PAGO_ACTIVO_DE_ORDEN = `
  SELECT ${PAGO_COLUMNS} FROM pagos
   WHERE client_id = $1::text AND numero_orden = $2::text AND estado IN ('PENDIENTE', 'APROBADO')`;

/** PENDIENTE → APROBADO | RECHAZADO | FALLIDO. Zero rows: another attempt of the operation settled it first. */
export const CERRAR_PAGO = `
  UPDATE pagos SET estado = $2::text, gateway_charge_id = $3::text, actualizado_en = now()
   WHERE id = $1::uuid AND estado = 'PENDIENTE'
  RETURNING ${PAGO_COLUMNS}`;
