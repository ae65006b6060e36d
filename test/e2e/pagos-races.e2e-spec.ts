import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { CONCILIAR_PAGO, INICIAR_PAGO } from '../../src/pagos/pagos.sql.js';
import { reservarPendiente } from '../../src/pagos/pending-versions.sql.js';
import { runMigrationScript } from '../support/app-process.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * The reconciler's statements of pagos.sql.ts raced on real connections: of N writers exactly one
 * wins, and an attempt resuming the payment always beats a settlement that read it before.
 */
const RACERS = 20;
// The reservation exactly as the reconciler sends it for payments.
const RESERVAR = reservarPendiente('pagos');

describe('reconciler statements under races', () => {
  let pool: pg.Pool;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('pagos_races');
    expect((await runMigrationScript('run', url)).code).toBe(0);
    pool = new pg.Pool({ connectionString: url, max: RACERS });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await pool?.end();
  });

  /** A PENDIENTE payment untouched for an hour, with the version a reconciler would read. */
  const stalePago = async (): Promise<{ id: string; operationId: string; version: string }> => {
    const id = randomUUID();
    const operationId = randomUUID();
    const { rows } = await db.query(
      `INSERT INTO pagos (id, client_id, operation_id, numero_orden, monto, moneda, estado, actualizado_en)
       VALUES ($1, 'alice', $2, $3, 1999, 'EUR', 'PENDIENTE', now() - interval '1 hour') RETURNING actualizado_en::text AS version`,
      [id, operationId, `ORD-${id.slice(0, 8)}`],
    );
    return { id, operationId, version: rows[0].version };
  };
  const rowsOf = async (sql: string, params: unknown[]): Promise<number> => (await pool.query(sql, params)).rowCount ?? 0;

  it('reservarPendiente(pagos): of 20 reconcilers that read the same version exactly one reserves the payment', async () => {
    const pago = await stalePago();
    const won = await Promise.all(Array.from({ length: RACERS }, () => rowsOf(RESERVAR, [pago.id, pago.version])));
    expect(won.reduce((sum, n) => sum + n, 0)).toBe(1);
  });

  it('CONCILIAR_PAGO: of 20 settlements at one version exactly one writes', async () => {
    const pago = await stalePago();
    const won = await Promise.all(Array.from({ length: RACERS }, (_, i) => rowsOf(CONCILIAR_PAGO, [pago.id, i % 2 ? 'FALLIDO' : 'APROBADO', null, pago.version])));
    expect(won.reduce((sum, n) => sum + n, 0)).toBe(1);
  });

  it('an attempt resuming the operation (INICIAR_PAGO) after the reservation makes the settlement match nothing', async () => {
    const pago = await stalePago();
    const { rows } = await pool.query(RESERVAR, [pago.id, pago.version]);
    const resumed = await pool.query(INICIAR_PAGO, [randomUUID(), 'alice', pago.operationId, `ORD-${pago.id.slice(0, 8)}`, 1999, 'EUR']);
    // A returned row is PENDIENTE again (the statement returns only what charging needs).
    expect(resumed.rows).toEqual([expect.objectContaining({ id: pago.id, nuevo: false })]);
    expect(await rowsOf(CONCILIAR_PAGO, [pago.id, 'FALLIDO', null, rows[0].version])).toBe(0);
    expect((await db.query(`SELECT estado FROM pagos WHERE id = $1`, [pago.id])).rows[0].estado).toBe('PENDIENTE');
  });

  it('a settlement racing a resuming attempt never leaves the payment settled under it: it ends PENDIENTE, held by the attempt', async () => {
    for (let round = 0; round < 10; round++) {
      const pago = await stalePago();
      const [settled, resumed] = await Promise.all([
        rowsOf(CONCILIAR_PAGO, [pago.id, 'FALLIDO', null, pago.version]),
        pool.query(INICIAR_PAGO, [randomUUID(), 'alice', pago.operationId, `ORD-${pago.id.slice(0, 8)}`, 1999, 'EUR']),
      ]);
      const { rows } = await db.query(`SELECT estado FROM pagos WHERE id = $1`, [pago.id]);
      // The resume either came first (the settlement then matched nothing) or flipped FALLIDO back to PENDIENTE: never lost.
      expect(rows[0].estado).toBe('PENDIENTE');
      expect(resumed.rowCount).toBe(1);
      expect([0, 1]).toContain(settled);
    }
  });
});
