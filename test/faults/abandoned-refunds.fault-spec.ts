import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { ALICE } from '../support/clients.js';
import { get, postReembolso } from '../support/http.js';
import { expireLease, keyRow } from '../support/ledger.js';
import { sampleOf, scrape } from '../support/metrics.js';
import { pagoAprobado, processorRefundsOf, refundTotals } from '../support/refunds.js';
import { survivorAndVictims } from '../support/survivor-and-victims.js';
import { waitUntil } from '../support/waiting.js';

/**
 * Refunds whose service process is SIGKILLed mid-flight: a retry with the same key takes the claim
 * over and resumes the operation, or nobody retries and the reconciler of a surviving process
 * settles it. Real: service processes (each with its local processor), SIGKILL, PostgreSQL.
 * Abandonment is dated back in SQL instead of waiting out the lock timeout.
 */

describe('refunds interrupted by a crash are refunded at most once', () => {
  const crash = survivorAndVictims('abandoned_refunds');

  const REFUNDED = `SELECT 1 FROM procesador_local.refunds g JOIN reembolsos r ON g.metadata->>'operation_id' = r.operation_id WHERE r.pago_id = $1`;
  const STARTED = `SELECT 1 FROM reembolsos WHERE pago_id = $1`;

  /** A refund of 400 sent to a process that is SIGKILLed once `marker` (SQL, $1 = payment) holds; its reconciler never runs. */
  const crashDuring = async (marker: string): Promise<{ pagoId: string; key: string }> => {
    const pagoId = await pagoAprobado(crash.survivor.baseUrl, ALICE, 1000);
    const victim = await crash.startVictim({ GATEWAY_LATENCY_MS: '3000' });
    const key = randomUUID();
    const lost = postReembolso(victim.baseUrl, pagoId, { client: ALICE, key, body: { monto: 400 } }).catch(() => undefined);
    await waitUntil(async () => ((await crash.db.query(marker, [pagoId])).rowCount ?? 0) > 0);
    await victim.stop('SIGKILL');
    await lost;
    expect(await estadoDeReembolso(pagoId)).toBe('PENDIENTE');
    return { pagoId, key };
  };
  const estadoDeReembolso = async (pagoId: string): Promise<string | undefined> =>
    (await crash.db.query(`SELECT estado FROM reembolsos WHERE pago_id = $1`, [pagoId])).rows[0]?.estado;
  /** Makes the refund and its claim look abandoned an hour ago. */
  const backdate = async (pagoId: string, key: string): Promise<void> => {
    await crash.db.query(`UPDATE reembolsos SET actualizado_en = now() - interval '1 hour' WHERE pago_id = $1`, [pagoId]);
    await expireLease(crash.db, key);
  };
  const settled = async (pagoId: string): Promise<string> => {
    await waitUntil(async () => (await estadoDeReembolso(pagoId)) !== 'PENDIENTE');
    return (await estadoDeReembolso(pagoId))!;
  };

  it('killed after the processor refunded, retried with the same key: the takeover asks the processor first, 201, refunded once', async () => {
    const { pagoId, key } = await crashDuring(REFUNDED);
    await expireLease(crash.db, key);
    const retry = await postReembolso(crash.survivor.baseUrl, pagoId, { client: ALICE, key, body: { monto: 400 } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.json).toMatchObject({ pagoId, monto: 400, estado: 'APROBADO' });
    expect(await processorRefundsOf(crash.db, ALICE, key)).toEqual([{ amount: 400 }]);
    expect(await refundTotals(crash.db, pagoId)).toEqual({ reservado: 400, reembolsado: 400, aprobados: 400, procesador: 400 });
    const replay = await postReembolso(crash.survivor.baseUrl, pagoId, { client: ALICE, key, body: { monto: 400 } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(retry.text);
  });

  it('killed after the processor refunded, nobody retries: the reconciler settles it APROBADO with the route\'s answer, refunded once', async () => {
    const approvedBefore = sampleOf(await scrape(crash.survivor.baseUrl), 'pagos_refunds_total', { result: 'approved' }) ?? 0;
    const { pagoId, key } = await crashDuring(REFUNDED);
    await backdate(pagoId, key);
    expect(await settled(pagoId)).toBe('APROBADO');
    expect(await keyRow(crash.db, ALICE.clientId, key)).toMatchObject({ status: 'completed', response_status: 201 });
    expect(await refundTotals(crash.db, pagoId)).toEqual({ reservado: 400, reembolsado: 400, aprobados: 400, procesador: 400 });
    expect(sampleOf(await scrape(crash.survivor.baseUrl), 'pagos_refunds_total', { result: 'approved' })).toBe(approvedBefore + 1);

    const late = await postReembolso(crash.survivor.baseUrl, pagoId, { client: ALICE, key, body: { monto: 400 } });
    expect(late.status).toBe(201);
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    expect(late.headers.get('location')).toBe(`/pagos/${pagoId}/reembolsos/${late.json.id}`);
    // The very bytes the route gives for that refund.
    expect(late.text).toBe((await get(crash.survivor.baseUrl, late.headers.get('location')!, ALICE)).text);
    expect(await processorRefundsOf(crash.db, ALICE, key)).toEqual([{ amount: 400 }]);
  });

  it('killed before the processor refunded, nobody retries: FALLIDO, the amount back on the payment, the key released; a retry refunds once', async () => {
    const { pagoId, key } = await crashDuring(STARTED);
    await backdate(pagoId, key);
    expect(await settled(pagoId)).toBe('FALLIDO');
    expect(await keyRow(crash.db, ALICE.clientId, key)).toMatchObject({ status: 'released' });
    expect(await refundTotals(crash.db, pagoId)).toEqual({ reservado: 0, reembolsado: 0, aprobados: 0, procesador: 0 });

    const retry = await postReembolso(crash.survivor.baseUrl, pagoId, { client: ALICE, key, body: { monto: 400 } });
    expect(retry.status).toBe(201);
    expect(await processorRefundsOf(crash.db, ALICE, key)).toEqual([{ amount: 400 }]);
    expect(await refundTotals(crash.db, pagoId)).toEqual({ reservado: 400, reembolsado: 400, aprobados: 400, procesador: 400 });
  });
});
