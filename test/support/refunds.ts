import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type pg from 'pg';
import type { TestClient } from './clients.js';
import { nuevoPago, postPago } from './http.js';
import { keyRow } from './ledger.js';

/** An APROBADO payment of `monto`, paid through the API; returns its id. */
export async function pagoAprobado(baseUrl: string, client: TestClient, monto = 1000): Promise<string> {
  const paid = await postPago(baseUrl, { client, key: randomUUID(), body: nuevoPago({ monto }) });
  expect(paid.status).toBe(201);
  return paid.json.id;
}

/**
 * A payment's refund totals on both sides: our counters, our rows, and the local processor's live
 * (pending or succeeded) refunds of its intent: a failed refund gave nothing back.
 */
export async function refundTotals(db: pg.Client, pagoId: string): Promise<{ reservado: number; reembolsado: number; aprobados: number; procesador: number }> {
  const { rows } = await db.query(
    `SELECT p.monto_reservado_reembolsos::int AS reservado, p.monto_reembolsado::int AS reembolsado,
            (SELECT coalesce(sum(monto), 0)::int FROM reembolsos r WHERE r.pago_id = p.id AND r.estado = 'APROBADO') AS aprobados,
            (SELECT coalesce(sum(amount), 0)::int FROM procesador_local.refunds g
              WHERE g.payment_intent = p.gateway_charge_id AND g.status IN ('pending', 'succeeded')) AS procesador
       FROM pagos p WHERE p.id = $1`,
    [pagoId],
  );
  return rows[0];
}

/** The refunds the processor made for one key's operation (found by their metadata, as the service finds them). */
export async function processorRefundsOf(db: pg.Client, client: TestClient, key: string): Promise<{ amount: number }[]> {
  const row = await keyRow(db, client.clientId, key);
  if (!row) return [];
  const { rows } = await db.query(`SELECT amount::int FROM procesador_local.refunds WHERE metadata->>'operation_id' = $1`, [row.operation_id]);
  return rows;
}

export async function countRefunds(db: pg.Client, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM reembolsos WHERE ${where}`, params);
  return rows[0].n;
}

/** The `reembolso.*` events of one refund in the outbox, oldest first. */
export async function refundEvents(db: pg.Client, reembolsoId: string): Promise<string[]> {
  const { rows } = await db.query(`SELECT type FROM eventos WHERE type LIKE 'reembolso.%' AND payload->'data'->>'id' = $1 ORDER BY seq`, [reembolsoId]);
  return rows.map((row) => row.type);
}

export async function reembolsoRow(db: pg.Client, id: string): Promise<{ estado: string; gateway_refund_id: string | null }> {
  return (await db.query(`SELECT estado, gateway_refund_id FROM reembolsos WHERE id = $1`, [id])).rows[0];
}
