import type pg from 'pg';
import { waitUntil } from './waiting.js';

/**
 * Makes a PENDIENTE payment and its claim look abandoned long ago, as after a crash a lock timeout back:
 * the reconciler may settle it at its next pass. (Never sleep out a timeout.)
 */
export async function backdateAbandoned(db: pg.Client, numeroOrden: string): Promise<void> {
  await db.query(`UPDATE pagos SET actualizado_en = now() - interval '1 hour' WHERE numero_orden = $1 AND estado = 'PENDIENTE'`, [numeroOrden]);
  await db.query(
    `UPDATE idempotency_keys SET locked_at = now() - interval '1 hour'
      WHERE status = 'in_flight' AND operation_id::text IN (SELECT operation_id FROM pagos WHERE numero_orden = $1)`,
    [numeroOrden],
  );
}

export async function estadoOf(db: pg.Client, numeroOrden: string): Promise<string | undefined> {
  const { rows } = await db.query(`SELECT estado FROM pagos WHERE numero_orden = $1 ORDER BY creado_en LIMIT 1`, [numeroOrden]);
  return rows[0]?.estado;
}

/** Resolves once the order's first payment has left PENDIENTE, with its new state. */
export async function settledEstado(db: pg.Client, numeroOrden: string): Promise<string> {
  await waitUntil(async () => (await estadoOf(db, numeroOrden)) !== 'PENDIENTE');
  return (await estadoOf(db, numeroOrden))!;
}

/**
 * Records every change of a payment's `estado` and of a key's `status` in `test_writes`: how a test
 * counts the writes racing settlers made, not just the end state.
 */
export async function recordStateWrites(db: pg.Client): Promise<void> {
  await db.query(`
    CREATE TABLE IF NOT EXISTS test_writes (tbl text NOT NULL, id text NOT NULL, state text NOT NULL);
    CREATE OR REPLACE FUNCTION test_record_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_TABLE_NAME = 'pagos' THEN
        INSERT INTO test_writes VALUES ('pagos', NEW.id::text, NEW.estado);
      ELSE
        INSERT INTO test_writes VALUES ('idempotency_keys', NEW.operation_id::text, NEW.status);
      END IF;
      RETURN NEW;
    END $$;
    CREATE OR REPLACE TRIGGER test_pagos_writes AFTER UPDATE OF estado ON pagos
      FOR EACH ROW WHEN (OLD.estado IS DISTINCT FROM NEW.estado) EXECUTE FUNCTION test_record_write();
    CREATE OR REPLACE TRIGGER test_keys_writes AFTER UPDATE OF status ON idempotency_keys
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status <> 'in_flight') EXECUTE FUNCTION test_record_write();`);
}

/** Makes a payment waiting for its customer look past its authentication time and untouched for an hour. (Never sleep out a timeout.) */
export async function backdateAuthentication(db: pg.Client, pagoId: string): Promise<void> {
  await db.query(
    `UPDATE pagos SET autenticacion_expira_en = now() - interval '1 hour', actualizado_en = now() - interval '1 hour'
      WHERE id = $1 AND estado = 'REQUIERE_AUTENTICACION'`,
    [pagoId],
  );
}

/** The events written about one payment, oldest first. */
export async function eventosDePago(db: pg.Client, pagoId: string): Promise<Array<{ id: string; type: string; data: Record<string, unknown> }>> {
  const { rows } = await db.query(`SELECT payload::text FROM eventos WHERE payload->'data'->>'id' = $1 ORDER BY seq`, [pagoId]);
  return rows.map((row) => JSON.parse(row.payload));
}
