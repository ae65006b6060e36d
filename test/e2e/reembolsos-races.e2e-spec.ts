import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { isSuperseded } from '../../src/database/postgres-errors.js';
import { reservarPendiente } from '../../src/pagos/pending-versions.sql.js';
import {
  APROBAR_REEMBOLSO, ASENTAR_REEMBOLSO_APROBADO, CONCILIAR_REEMBOLSO_APROBADO, CONCILIAR_REEMBOLSO_FALLIDO, REANUDAR_REEMBOLSO_FALLIDO, REANUDAR_REEMBOLSO_PENDIENTE, RESERVAR_REEMBOLSO,
} from '../../src/reembolsos/reembolsos.sql.js';
import { BLOQUEAR_REEMBOLSO, FALLAR_REEMBOLSO_EN_PROCESADOR } from '../../src/reembolsos/reembolsos-procesador.sql.js';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { expectOneExecution } from '../support/duplicate-answers.js';
import { postReembolso } from '../support/http.js';
import { countRefunds, pagoAprobado, processorRefundsOf, refundTotals } from '../support/refunds.js';
import { connect, createTestDatabase } from '../support/test-database.js';

/**
 * The sum rule and the duplicates rule for refunds, over real HTTP against two service processes
 * sharing one PostgreSQL (the processor takes 300 ms, so requests overlap), and the refund
 * statements raced on real connections: of N writers exactly the allowed number win.
 */
const RACERS = 20;

describe('concurrent refunds over two replicas', () => {
  let replicas: AppProcess[];
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('reembolsos_concurrency');
    const first = await startAppProcess(url, { GATEWAY_LATENCY_MS: '300' });
    const second = await startAppProcess(url, { GATEWAY_LATENCY_MS: '300', DB_MIGRATIONS_RUN: 'false' });
    replicas = [first, second];
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all((replicas ?? []).map((replica) => replica.stop('SIGKILL')));
  });

  it(`${RACERS} concurrent refunds of 100 with different keys on a payment of 1000, spread over both replicas: exactly 10 approved`, async () => {
    const pagoId = await pagoAprobado(replicas[0]!.baseUrl, ALICE, 1000);
    const results = await Promise.all(Array.from({ length: RACERS }, (_, i) =>
      postReembolso(replicas[i % 2]!.baseUrl, pagoId, { client: ALICE, key: randomUUID(), body: { monto: 100 } })));

    const approved = results.filter((result) => result.status === 201);
    expect(approved).toHaveLength(10);
    const refused = results.filter((result) => result.status !== 201);
    expect(refused).toHaveLength(10);
    for (const result of refused) expect(result.json).toMatchObject({ status: 409, type: expect.stringContaining('reembolso-excede-pago'), montoReembolsable: 0 });
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 1000, reembolsado: 1000, aprobados: 1000, procesador: 1000 });
    expect(await countRefunds(db, 'pago_id = $1', [pagoId])).toBe(10);
  });

  it(`${RACERS} concurrent duplicates of one refund key over both replicas: one refund, one stored answer, every other a 409 or that answer`, async () => {
    const pagoId = await pagoAprobado(replicas[0]!.baseUrl, ALICE, 1000);
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: RACERS }, (_, i) =>
      postReembolso(replicas[i % 2]!.baseUrl, pagoId, { client: ALICE, key, body: { monto: 250 } })));

    const executed = expectOneExecution(results);
    expect(executed.json).toMatchObject({ pagoId, monto: 250, estado: 'APROBADO' });
    expect(await processorRefundsOf(db, ALICE, key)).toEqual([{ amount: 250 }]);
    expect(await refundTotals(db, pagoId)).toEqual({ reservado: 250, reembolsado: 250, aprobados: 250, procesador: 250 });
    const again = await postReembolso(replicas[1]!.baseUrl, pagoId, { client: ALICE, key, body: { monto: 250 } });
    expect(again.text).toBe(executed.text);
  });
});

describe('refund statements under races', () => {
  let pool: pg.Pool;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('reembolsos_races');
    const app = await startAppProcess(url);
    await app.stop();
    pool = new pg.Pool({ connectionString: url, max: RACERS });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await pool?.end();
  });

  /** An APROBADO payment of `monto` with a charge id, straight in SQL. */
  const pago = async (monto = 1000): Promise<string> => {
    const id = randomUUID();
    await db.query(
      `INSERT INTO pagos (id, client_id, operation_id, numero_orden, monto, moneda, estado, gateway_charge_id)
       VALUES ($1, 'alice', gen_random_uuid(), $2, $3, 'EUR', 'APROBADO', gen_random_uuid())`,
      [id, `ORD-${id.slice(0, 8)}`, monto],
    );
    return id;
  };
  /** A refund of 100 of that payment, in `estado`, untouched for an hour, with its counters moved as the statements would. */
  const reembolso = async (pagoId: string, estado: 'PENDIENTE' | 'FALLIDO'): Promise<{ id: string; operationId: string; version: string }> => {
    const [id, operationId] = [randomUUID(), randomUUID()];
    const { rows } = await db.query(
      `INSERT INTO reembolsos (id, pago_id, client_id, operation_id, monto, moneda, estado, gateway_charge_id, actualizado_en)
       VALUES ($1, $2, 'alice', $3, 100, 'EUR', $4, 'ch', now() - interval '1 hour') RETURNING actualizado_en::text AS version`,
      [id, pagoId, operationId, estado],
    );
    if (estado === 'PENDIENTE') await db.query(`UPDATE pagos SET monto_reservado_reembolsos = monto_reservado_reembolsos + 100 WHERE id = $1`, [pagoId]);
    return { id, operationId, version: rows[0].version };
  };
  const race = (statement: (i: number) => Promise<pg.QueryResult>): Promise<number> =>
    Promise.all(Array.from({ length: RACERS }, (_, i) => statement(i).then((result) => result.rowCount ?? 0, () => 0))).then((won) => won.reduce((a, b) => a + b, 0));
  const totals = async (pagoId: string) => (await db.query(`SELECT monto_reservado_reembolsos::int AS reservado, monto_reembolsado::int AS reembolsado FROM pagos WHERE id = $1`, [pagoId])).rows[0];

  it('RESERVAR_REEMBOLSO: of 20 reservations of 100 on 1000, exactly 10 insert, and the reserved total is 1000', async () => {
    const pagoId = await pago(1000);
    const won = await race(() => pool.query(RESERVAR_REEMBOLSO, [randomUUID(), pagoId, 'alice', randomUUID(), 100, null]));
    expect(won).toBe(10);
    expect(await totals(pagoId)).toEqual({ reservado: 1000, reembolsado: 0 });
  });

  it('RESERVAR_REEMBOLSO: 20 racers of one operation insert once and reserve once (23505 undoes the others’ reservations)', async () => {
    const pagoId = await pago(1000);
    const operationId = randomUUID();
    const won = await race(() => pool.query(RESERVAR_REEMBOLSO, [randomUUID(), pagoId, 'alice', operationId, 100, null]));
    expect(won).toBe(1);
    expect(await totals(pagoId)).toEqual({ reservado: 100, reembolsado: 0 });
  });

  it('REANUDAR_REEMBOLSO_FALLIDO: of 20 attempts resuming one failed refund exactly one does, reserving its amount once', async () => {
    const pagoId = await pago(1000);
    const fallido = await reembolso(pagoId, 'FALLIDO');
    expect(await race(() => pool.query(REANUDAR_REEMBOLSO_FALLIDO, [fallido.operationId]))).toBe(1);
    expect(await totals(pagoId)).toEqual({ reservado: 100, reembolsado: 0 });
  });

  it('REANUDAR_REEMBOLSO_FALLIDO: when other refunds took its amount meanwhile, the CHECK refuses it and nothing changes', async () => {
    const pagoId = await pago(100);
    const fallido = await reembolso(pagoId, 'FALLIDO');
    await db.query(`UPDATE pagos SET monto_reservado_reembolsos = 100 WHERE id = $1`, [pagoId]);
    await expect(pool.query(REANUDAR_REEMBOLSO_FALLIDO, [fallido.operationId])).rejects.toMatchObject({ code: '23514' });
    expect((await db.query(`SELECT estado FROM reembolsos WHERE id = $1`, [fallido.id])).rows[0].estado).toBe('FALLIDO');
  });

  it('CONCILIAR_REEMBOLSO_APROBADO / _FALLIDO: of 20 settlements at one version exactly one writes, and the counters move once', async () => {
    const pagoId = await pago(1000);
    const pendiente = await reembolso(pagoId, 'PENDIENTE');
    const won = await race((i) => i % 2
      ? pool.query(CONCILIAR_REEMBOLSO_APROBADO, [pendiente.id, 'rf', pendiente.version])
      : pool.query(CONCILIAR_REEMBOLSO_FALLIDO, [pendiente.id, pendiente.version]));
    expect(won).toBe(1);
    const { estado } = (await db.query(`SELECT estado FROM reembolsos WHERE id = $1`, [pendiente.id])).rows[0];
    expect(await totals(pagoId)).toEqual(estado === 'APROBADO' ? { reservado: 100, reembolsado: 100 } : { reservado: 0, reembolsado: 0 });
  });

  /** A refund of 100 recorded with processor refund `re_<id>`, in `estado`, its counters moved as the statements would. */
  const registrado = async (pagoId: string, estado: 'PENDIENTE' | 'APROBADO'): Promise<{ id: string; refundId: string; version: string }> => {
    const { id, version } = await reembolso(pagoId, 'PENDIENTE');
    const refundId = `re_${id}`;
    await db.query(`UPDATE reembolsos SET estado = $2, gateway_refund_id = $3 WHERE id = $1`, [id, estado, refundId]);
    if (estado === 'APROBADO') await db.query(`UPDATE pagos SET monto_reembolsado = monto_reembolsado + 100 WHERE id = $1`, [pagoId]);
    return { id, refundId, version };
  };

  /** FALLAR_REEMBOLSO_EN_PROCESADOR as the service runs it: in a transaction, after BLOQUEAR_REEMBOLSO. */
  const fallarEnProcesador = async (id: string, refundId: string): Promise<pg.QueryResult> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(BLOQUEAR_REEMBOLSO, [id]);
      const result = await client.query(FALLAR_REEMBOLSO_EN_PROCESADOR, [id, refundId]);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  };

  it('FALLAR_REEMBOLSO_EN_PROCESADOR: of 20 deciders of one APROBADO refund that failed later exactly one writes, and both counters go back once', async () => {
    const pagoId = await pago(1000);
    const aprobado = await registrado(pagoId, 'APROBADO');
    expect(await totals(pagoId)).toEqual({ reservado: 100, reembolsado: 100 });
    expect(await race(() => fallarEnProcesador(aprobado.id, aprobado.refundId))).toBe(1);
    expect(await totals(pagoId)).toEqual({ reservado: 0, reembolsado: 0 });
    expect((await db.query(`SELECT estado FROM reembolsos WHERE id = $1`, [aprobado.id])).rows[0].estado).toBe('FALLIDO');
  });

  it('a pending refund that failed, decided by 20 at once (webhooks and the reconciler at its version): one writes, the reservation goes back once', async () => {
    const pagoId = await pago(1000);
    const pendiente = await registrado(pagoId, 'PENDIENTE');
    const won = await race((i) => i % 2
      ? fallarEnProcesador(pendiente.id, pendiente.refundId)
      : pool.query(CONCILIAR_REEMBOLSO_FALLIDO, [pendiente.id, pendiente.version]));
    expect(won).toBe(1);
    expect(await totals(pagoId)).toEqual({ reservado: 0, reembolsado: 0 });
  });

  it('FALLAR_REEMBOLSO_EN_PROCESADOR racing the route approving the same refund from an older answer: whichever order, FALLIDO at the end and the counters at zero', async () => {
    const pagoId = await pago(1000);
    const pendiente = await registrado(pagoId, 'PENDIENTE');
    await Promise.all([
      pool.query(APROBAR_REEMBOLSO, [pendiente.id, pendiente.refundId]),
      ...Array.from({ length: RACERS - 1 }, () => fallarEnProcesador(pendiente.id, pendiente.refundId)),
    ]);
    // If the approval came first, a later failure took it back from APROBADO; if it came last, it matched nothing.
    expect((await db.query(`SELECT estado FROM reembolsos WHERE id = $1`, [pendiente.id])).rows[0].estado).toBe('FALLIDO');
    expect(await totals(pagoId)).toEqual({ reservado: 0, reembolsado: 0 });
  });

  it('ASENTAR_REEMBOLSO_APROBADO (the route) racing 19 webhooks approving one pending refund: one writes, the amount is added once, and a losing route raises SUPERSEDED', async () => {
    for (const routes of [1, RACERS]) {
      const pagoId = await pago(1000);
      const pendiente = await registrado(pagoId, 'PENDIENTE');
      const route = () => pool.query(ASENTAR_REEMBOLSO_APROBADO, [pendiente.id, pendiente.refundId]).then(() => 1, (error: unknown) => {
        if (!isSuperseded(error)) throw error;
        return 0;
      });
      const webhook = async () => (await pool.query(APROBAR_REEMBOLSO, [pendiente.id, pendiente.refundId])).rowCount ?? 0;
      const won = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i < routes ? route() : webhook())));
      expect(won.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await totals(pagoId)).toEqual({ reservado: 100, reembolsado: 100 });
    }
  });

  it('the reconciler reserving a refund (shared statement) has one winner; an attempt resuming it after makes its settlement match nothing', async () => {
    const pagoId = await pago(1000);
    const pendiente = await reembolso(pagoId, 'PENDIENTE');
    expect(await race(() => pool.query(reservarPendiente('reembolsos'), [pendiente.id, pendiente.version]))).toBe(1);
    const [{ version }] = (await db.query(`SELECT actualizado_en::text AS version FROM reembolsos WHERE id = $1`, [pendiente.id])).rows;
    expect((await pool.query(REANUDAR_REEMBOLSO_PENDIENTE, [pendiente.operationId])).rowCount).toBe(1);
    expect((await pool.query(CONCILIAR_REEMBOLSO_FALLIDO, [pendiente.id, version])).rowCount).toBe(0);
    expect(await totals(pagoId)).toEqual({ reservado: 100, reembolsado: 0 });
  });
});
