/** Statements of the processor's events as applied (table `eventos_procesador`, migration 1764700021000). */

/** Whether event $1 was applied already: a redelivery is answered without asking the processor again. */
export const EVENTO_APLICADO = `SELECT 1 AS aplicado FROM eventos_procesador WHERE id = $1::text`;

/**
 * Records event $1 (type $2) as applied, first in the transaction of the change it causes.
 * Race: two deliveries of one event at once (a redelivery, or two replicas) insert the same id; the
 * second waits for the first's transaction, then its ON CONFLICT matches and it gets no row: it
 * applies nothing. If the first rolls back (or its process dies), the second applies it.
 * Zero rows: applied already.
 */
export const REGISTRAR_EVENTO = `
  INSERT INTO eventos_procesador (id, tipo) VALUES ($1::text, $2::text) ON CONFLICT (id) DO NOTHING RETURNING 1 AS registrado`;

/**
 * Deletes up to $2 events applied more than $1 days ago. The processor stops redelivering long before
 * (Stripe: 3 days), so nothing purged can come back.
 */
export const PURGAR_EVENTOS_APLICADOS = `
  DELETE FROM eventos_procesador WHERE id IN (
    SELECT id FROM eventos_procesador WHERE recibido_en < now() - make_interval(days => $1::int) ORDER BY recibido_en LIMIT $2::int)`;
