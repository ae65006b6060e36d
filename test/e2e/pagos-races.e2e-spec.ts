import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { isSuperseded } from '../../src/database/postgres-errors.js';
import { ASENTAR_PAGO, CONCILIAR_PAGO, DECIDIR_PAGO, INICIAR_PAGO } from '../../src/pagos/pagos.sql.js';
import { REGISTRAR_EVENTO } from '../../src/processor-webhooks/processor-webhooks.sql.js';
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
  /** The route settling a PENDIENTE payment (1), or finding it settled by somebody else (0: it raised SUPERSEDED). */
  const asentar = (id: string, estado: string, intent: string, secret: string | null = null): Promise<number> =>
    pool.query(ASENTAR_PAGO, [id, estado, intent, estado === 'RECHAZADO' ? 'tarjeta' : null, secret, secret && new Date(Date.now() + 900_000)]).then(
      () => 1,
      (error: unknown) => {
        if (!isSuperseded(error)) throw error;
        return 0;
      },
    );
  /** CONCILIAR_PAGO's parameters for a final state at `version` (no motivo, secret or wait). */
  const conciliar = (id: string, estado: string, version: string): unknown[] => [id, estado, null, version, null, null, 900];
  /** A payment waiting for its customer on intent `pi_<id>`. */
  const waitingPago = async (): Promise<{ id: string; intent: string }> => {
    const pago = await stalePago();
    const intent = `pi_${pago.id.replaceAll('-', '')}`;
    expect(await asentar(pago.id, 'REQUIERE_AUTENTICACION', intent, `${intent}_secret_x`)).toBe(1);
    return { id: pago.id, intent };
  };

  it('reservarPendiente(pagos): of 20 reconcilers that read the same version exactly one reserves the payment', async () => {
    const pago = await stalePago();
    const won = await Promise.all(Array.from({ length: RACERS }, () => rowsOf(RESERVAR, [pago.id, pago.version])));
    expect(won.reduce((sum, n) => sum + n, 0)).toBe(1);
  });

  it('CONCILIAR_PAGO: of 20 settlements at one version exactly one writes', async () => {
    const pago = await stalePago();
    const won = await Promise.all(Array.from({ length: RACERS }, (_, i) => rowsOf(CONCILIAR_PAGO, conciliar(pago.id, i % 2 ? 'FALLIDO' : 'APROBADO', pago.version))));
    expect(won.reduce((sum, n) => sum + n, 0)).toBe(1);
  });

  it('an attempt resuming the operation (INICIAR_PAGO) after the reservation makes the settlement match nothing', async () => {
    const pago = await stalePago();
    const { rows } = await pool.query(RESERVAR, [pago.id, pago.version]);
    const resumed = await pool.query(INICIAR_PAGO, [randomUUID(), 'alice', pago.operationId, `ORD-${pago.id.slice(0, 8)}`, 1999, 'EUR']);
    // A returned row is PENDIENTE again (the statement returns only what charging needs).
    expect(resumed.rows).toEqual([expect.objectContaining({ id: pago.id, nuevo: false })]);
    expect(await rowsOf(CONCILIAR_PAGO, conciliar(pago.id, 'FALLIDO', rows[0].version))).toBe(0);
    expect((await db.query(`SELECT estado FROM pagos WHERE id = $1`, [pago.id])).rows[0].estado).toBe('PENDIENTE');
  });

  it('a settlement racing a resuming attempt never leaves the payment settled under it: it ends PENDIENTE, held by the attempt', async () => {
    for (let round = 0; round < 10; round++) {
      const pago = await stalePago();
      const [settled, resumed] = await Promise.all([
        rowsOf(CONCILIAR_PAGO, conciliar(pago.id, 'FALLIDO', pago.version)),
        pool.query(INICIAR_PAGO, [randomUUID(), 'alice', pago.operationId, `ORD-${pago.id.slice(0, 8)}`, 1999, 'EUR']),
      ]);
      const { rows } = await db.query(`SELECT estado FROM pagos WHERE id = $1`, [pago.id]);
      // The resume either came first (the settlement then matched nothing) or flipped FALLIDO back to PENDIENTE: never lost.
      expect(rows[0].estado).toBe('PENDIENTE');
      expect(resumed.rowCount).toBe(1);
      expect([0, 1]).toContain(settled);
    }
  });

  it('DECIDIR_PAGO: of 20 deciders of one waiting payment (webhooks, replicas, the reconciler) exactly one writes, whatever each decided', async () => {
    const { id, intent } = await waitingPago();
    const won = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        rowsOf(DECIDIR_PAGO, [id, i % 2 ? 'RECHAZADO' : 'APROBADO', 'REQUIERE_AUTENTICACION', intent, i % 2 ? 'autenticacion' : null])),
    );
    expect(won.reduce((sum, n) => sum + n, 0)).toBe(1);
    const { rows } = await db.query(`SELECT estado, client_secret FROM pagos WHERE id = $1`, [id]);
    expect(['APROBADO', 'RECHAZADO']).toContain(rows[0].estado);
    expect(rows[0].client_secret).toBeNull();
  });

  it('DECIDIR_PAGO about an intent the payment left behind (a canceled attempt) matches nothing', async () => {
    const { id } = await waitingPago();
    expect(await rowsOf(DECIDIR_PAGO, [id, 'APROBADO', 'REQUIERE_AUTENTICACION', 'pi_an_older_attempt', null])).toBe(0);
  });

  it('the route waiting for the customer racing a webhook deciding the PENDIENTE payment: one of them writes, never both', async () => {
    for (let round = 0; round < 10; round++) {
      const pago = await stalePago();
      const intent = `pi_${pago.id.replaceAll('-', '')}`;
      await db.query(`UPDATE pagos SET gateway_charge_id = $2 WHERE id = $1`, [pago.id, intent]);
      const [waiting, decided] = await Promise.all([
        asentar(pago.id, 'REQUIERE_AUTENTICACION', intent, `${intent}_secret_x`),
        rowsOf(DECIDIR_PAGO, [pago.id, 'APROBADO', 'PENDIENTE', intent, null]),
      ]);
      expect(waiting + decided).toBe(1);
    }
  });

  it('ASENTAR_PAGO: of 20 routes settling one PENDIENTE payment exactly one writes; the others raise SUPERSEDED', async () => {
    const pago = await stalePago();
    const intent = `pi_${pago.id.replaceAll('-', '')}`;
    const won = await Promise.all(Array.from({ length: RACERS }, (_, i) => asentar(pago.id, i % 2 ? 'RECHAZADO' : 'APROBADO', intent)));
    expect(won.reduce((sum, n) => sum + n, 0)).toBe(1);
  });

  it('REGISTRAR_EVENTO: of 20 deliveries of one processor event racing in their transactions exactly one records it', async () => {
    const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
    const clients = await Promise.all(Array.from({ length: RACERS }, () => pool.connect()));
    try {
      await Promise.all(clients.map((client) => client.query('BEGIN')));
      const recorded = await Promise.all(clients.map(async (client) => {
        const { rowCount } = await client.query(REGISTRAR_EVENTO, [eventId, 'payment_intent.succeeded']);
        await client.query('COMMIT');
        return rowCount ?? 0;
      }));
      expect(recorded.reduce((sum, n) => sum + n, 0)).toBe(1);
    } finally {
      for (const client of clients) client.release();
    }
  });
});
