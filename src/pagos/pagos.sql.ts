/**
 * Statements of the payment lifecycle: PENDIENTE → APROBADO | RECHAZADO | FALLIDO (→ PENDIENTE on
 * retry), or PENDIENTE → REQUIERE_AUTENTICACION → APROBADO | RECHAZADO when the customer must
 * authenticate (3-D Secure).
 */

export const PAGO_COLUMNS = `
  id, client_id AS "clientId", operation_id AS "operationId", numero_orden AS "numeroOrden", monto::text AS monto,
  moneda, monto_reembolsado::text AS "montoReembolsado", estado, gateway_charge_id AS "gatewayChargeId",
  intento_procesador AS "intentoProcesador", motivo, client_secret AS "clientSecret",
  autenticacion_expira_en AS "autenticacionExpiraEn", creado_en AS "creadoEn", actualizado_en AS "actualizadoEn"`;

/**
 * Starts (or resumes) the payment of one operation right before it is charged.
 * New operation: inserts PENDIENTE; the partial unique index on (client, order) raises 23505 when
 * another operation already holds the order (PENDIENTE or APROBADO), so two keys can't both charge it.
 * Resumed operation: FALLIDO → PENDIENTE (its charge had failed), or PENDIENTE again. Either way
 * `actualizado_en` becomes now(): every write of the reconciler is conditional on the value it read
 * (CONCILIAR_PAGO), so it can't declare "never charged" a payment an attempt is about to charge.
 * A settled payment (APROBADO, RECHAZADO) returns no row.
 * `nuevo` is true only for a fresh insert: a resumed operation must ask the gateway what it did.
 * A returned row is PENDIENTE by construction; it carries only what charging needs (every column of
 * a RowDescription costs node-postgres work on each call, and this runs on every first request).
 * The INSERT is the body of `pagos_iniciar` (migration 1764700015000), planned once per connection.
 */
export const INICIAR_PAGO = `
  SELECT * FROM pagos_iniciar($1::uuid, $2::text, $3::text, $4::text, $5::bigint, $6::text)`;

/**
 * Records the intent $2 created for PENDIENTE payment $1 at attempt $3, before it is confirmed: from
 * here on, whoever resumes or reconciles the payment asks the processor about this intent by its id.
 * Renews `actualizado_en`, so a reconciler that read the payment before cannot settle it from that read.
 * Zero rows: settled, or moved on to another attempt, since this attempt read it: do not confirm.
 */
export const REGISTRAR_INTENT = `
  UPDATE pagos SET gateway_charge_id = $2::text, actualizado_en = now()
   WHERE id = $1::uuid AND estado = 'PENDIENTE' AND intento_procesador = $3::int AND (gateway_charge_id IS NULL OR gateway_charge_id = $2::text)
  RETURNING 1 AS registrado`;

/**
 * PENDIENTE payment $1 at attempt $2 → attempt $2 + 1: its current keys can no longer do what is
 * needed (the processor replays a 5xx it kept under one; a canceled intent can't be confirmed).
 * $3 keeps the intent (a new confirmation of it) or forgets it (a new intent). Race: of two attempts
 * moving on from one attempt number, one matches; the other gets no row.
 */
export const SIGUIENTE_INTENTO = `
  UPDATE pagos SET intento_procesador = intento_procesador + 1, gateway_charge_id = CASE WHEN $3::boolean THEN gateway_charge_id END,
         actualizado_en = now()
   WHERE id = $1::uuid AND estado = 'PENDIENTE' AND intento_procesador = $2::int
  RETURNING intento_procesador AS intento`;

/**
 * PENDIENTE → FALLIDO: the processor failed without charging (a processing error). The next attempt
 * of the operation confirms under a new key, since the processor replays this failure under the old one.
 * Returns what the payment's answer shows (its `pago.fallido` event carries it).
 * Zero rows: another attempt settled it first.
 */
export const FALLAR_PAGO = `
  UPDATE pagos SET estado = 'FALLIDO', intento_procesador = intento_procesador + 1, actualizado_en = now()
   WHERE id = $1::uuid AND estado = 'PENDIENTE'
  RETURNING ${PAGO_COLUMNS}`;

export const ESTADO_DE_PAGO = `SELECT estado FROM pagos WHERE id = $1::uuid`;

export const PAGO_POR_OPERACION = `SELECT ${PAGO_COLUMNS} FROM pagos WHERE operation_id = $1::text`;

export const PAGO_ACTIVO_DE_ORDEN = `
  SELECT ${PAGO_COLUMNS} FROM pagos
   WHERE client_id = $1::text AND numero_orden = $2::text AND estado IN ('PENDIENTE', 'REQUIERE_AUTENTICACION', 'APROBADO')`;

/**
 * PENDIENTE → $2 (APROBADO, RECHAZADO with the motivo $4, or REQUIERE_AUTENTICACION with the client
 * secret $5 until $6), with the intent $3; renews `actualizado_en`, so a reconciler that read the
 * PENDIENTE row can't settle it from that read. Returns nothing: the route knows the settled payment
 * already, and queues this behind nothing it waits for (see `pagos_asentar`, migration 1764700026000).
 * Race: another attempt of the operation, the reconciler or the processor's webhook settled it first:
 * then it raises SUPERSEDED_SQLSTATE, and its transaction (the event, the stored answer) rolls back.
 */
export const ASENTAR_PAGO = `
  SELECT pagos_asentar($1::uuid, $2::text, $3::text, $4::text, $5::text, $6::timestamptz)`;

/**
 * PENDIENTE or REQUIERE_AUTENTICACION ($3) → APROBADO | RECHAZADO ($2, motivo $5), decided from what
 * the processor says now of the payment's intent $4: by a webhook, or by the reconciler for payments
 * waiting for the customer. The client secret is forgotten.
 * Race: the route, the reconciler and any number of webhooks (duplicates, other replicas) may decide
 * the same payment at once; each is conditional on the state it read and on the intent being the
 * payment's current one, so exactly one writes and the others match nothing. An event about an
 * intent the payment left behind (a canceled attempt) matches nothing either.
 * Zero rows: somebody else decided first, or the payment moved on to another intent.
 */
export const DECIDIR_PAGO = `
  UPDATE pagos SET estado = $2::text, motivo = $5::text, client_secret = NULL, autenticacion_expira_en = NULL, actualizado_en = now()
   WHERE id = $1::uuid AND estado = $3::text AND gateway_charge_id = $4::text
  RETURNING ${PAGO_COLUMNS}`;

/** The payment whose current intent is $1, if any (a webhook's first question: is this ours?). */
export const PAGO_POR_INTENT = `SELECT ${PAGO_COLUMNS} FROM pagos WHERE gateway_charge_id = $1::text`;

/**
 * Where client $2's payment $1 stands in the list's (creado_en, id) order: the cursor `desde` of
 * GET /pagos. `creado_en` as text, to the microsecond: a JS Date would round it to the millisecond
 * and skip or repeat the payments created in the same millisecond. No row: not the client's.
 */
export const POSICION_DE_PAGO = `
  SELECT creado_en::text AS "creadoEn", id FROM pagos WHERE id = $1::uuid AND client_id = $2::text`;

/**
 * GET /pagos: client $1's payments, oldest first in (creado_en, id) order (`id` breaks the ties of
 * one transaction's now()), $2 at most, only order $3 when it is not null. Index: pagos_client_creado_idx
 * (migration 1764700024000), or pagos_client_orden_idx with an order. Payments are never deleted and
 * `creado_en` never changes, so paging with POSICION_DE_PAGO and PAGOS_DE_CLIENTE_DESDE lists each
 * payment that existed when the paging began exactly once. One created meanwhile is listed in a later
 * page, unless its INSERT committed after a page already passed its `creado_en` (its own commit's
 * latency, a few milliseconds): the list is not a feed; GET /eventos is.
 */
export const PAGOS_DE_CLIENTE = `
  SELECT ${PAGO_COLUMNS} FROM pagos
   WHERE client_id = $1::text AND ($3::text IS NULL OR numero_orden = $3::text)
   ORDER BY creado_en, id
   LIMIT $2::int`;

/** As PAGOS_DE_CLIENTE, after the position ($4 creado_en, $5 id) of the cursor's payment. */
export const PAGOS_DE_CLIENTE_DESDE = `
  SELECT ${PAGO_COLUMNS} FROM pagos
   WHERE client_id = $1::text AND ($3::text IS NULL OR numero_orden = $3::text) AND (creado_en, id) > ($4::timestamptz, $5::uuid)
   ORDER BY creado_en, id
   LIMIT $2::int`;

/**
 * Payments waiting for the customer and untouched for at least $1 seconds, $3 at a time in id order
 * after $2: the reconciler asks the processor about them when no webhook came, and gives up on
 * those whose `autenticacion_expira_en` has passed.
 */
export const PAGOS_ESPERANDO_AUTENTICACION = `
  SELECT ${PAGO_COLUMNS}, autenticacion_expira_en <= now() AS expirado FROM pagos
   WHERE estado = 'REQUIERE_AUTENTICACION' AND actualizado_en <= now() - make_interval(secs => $1::int) AND id > $2::uuid
   ORDER BY id
   LIMIT $3::int`;

/**
 * Payments PENDIENTE and untouched for at least $1 seconds, $3 at a time in id order after $2: what
 * the reconciler looks at (and an operator lists). A plain read; `version` is `actualizado_en` to the
 * microsecond, which every later statement of the reconciler is conditional on.
 */
export const PAGOS_PENDIENTES_DESDE = `
  SELECT ${PAGO_COLUMNS}, actualizado_en::text AS version FROM pagos
   WHERE estado = 'PENDIENTE' AND actualizado_en <= now() - make_interval(secs => $1::int) AND id > $2::uuid
   ORDER BY id
   LIMIT $3::int`;

export const CONTAR_PENDIENTES_DESDE = `
  SELECT count(*)::int AS n FROM pagos WHERE estado = 'PENDIENTE' AND actualizado_en <= now() - make_interval(secs => $1::int)`;


/**
 * PENDIENTE at our reservation's version $4 → APROBADO | RECHAZADO (motivo $5) | FALLIDO |
 * REQUIERE_AUTENTICACION (client secret $6, for $7 seconds), by the reconciler, with what the
 * processor says of the payment's intent ($3).
 * Race: an attempt resuming the operation meanwhile (INICIAR_PAGO) changes the version first, and
 * this matches nothing: the attempt's own outcome stands, so "never charged" is never written over a
 * payment an attempt has started to charge since the reservation.
 * Zero rows: somebody else resumed or settled it since it was reserved; leave it.
 */
export const CONCILIAR_PAGO = `
  UPDATE pagos SET estado = $2::text, gateway_charge_id = $3::text, motivo = $5::text, client_secret = $6::text,
         autenticacion_expira_en = CASE WHEN $2::text = 'REQUIERE_AUTENTICACION' THEN now() + make_interval(secs => $7::int) END,
         actualizado_en = now()
   WHERE id = $1::uuid AND estado = 'PENDIENTE' AND actualizado_en = $4::timestamptz
  RETURNING ${PAGO_COLUMNS}`;
