import { describe, expect, it } from '@jest/globals';
import { waitForOutcome } from '../../examples/client/authentication.js';
import {
  authenticationOf,
  intentIdOf,
  isDecided,
  nextWaitStep,
  preferWaitSeconds,
  readPagoAnswer,
} from '../../examples/client/authentication-policy.js';
import { parseCliOptions } from '../../examples/client/cli-options.js';
import type { PagosAnswer, PagosClient } from '../../examples/client/pagos-client.js';

/** The example client's decisions about a payment waiting for 3-D Secure, pure: answers are plain objects, the clock is passed in. */
const SECRET = 'pi_3QxAbcDEF_secret_Zk1Hq2w';
const accepted = (overrides: Record<string, unknown> = {}) => ({
  status: 202,
  json: { id: 'p-1', estado: 'REQUIERE_AUTENTICACION', autenticacion: { clientSecret: SECRET, expiraEn: '2026-12-05T09:00:00.000Z' }, ...overrides },
});
const pago = (estado: string, extra: Record<string, unknown> = {}) => ({ status: 200, json: { id: 'p-1', estado, ...extra } });

describe('authenticationOf (what a 202 hands the app)', () => {
  it('reads the payment id, the client secret, its intent and the deadline', () => {
    expect(authenticationOf(accepted())).toEqual({ pagoId: 'p-1', clientSecret: SECRET, intentId: 'pi_3QxAbcDEF', expiraEn: '2026-12-05T09:00:00.000Z' });
  });

  it('is undefined for any other answer: a 201, a 202 of another shape, a secret that is not one', () => {
    expect(authenticationOf({ status: 201, json: { id: 'p-1', estado: 'APROBADO' } })).toBeUndefined();
    expect(authenticationOf({ ...accepted(), status: 200 })).toBeUndefined();
    expect(authenticationOf(accepted({ estado: 'PENDIENTE' }))).toBeUndefined();
    expect(authenticationOf(accepted({ autenticacion: undefined }))).toBeUndefined();
    expect(authenticationOf(accepted({ autenticacion: { clientSecret: 'pi_123', expiraEn: 'x' } }))).toBeUndefined();
    expect(authenticationOf({ status: 202, json: undefined })).toBeUndefined();
  });

  it("the intent is the secret's part before _secret_", () => {
    expect(intentIdOf('pi_1_secret_2')).toBe('pi_1');
    expect(intentIdOf('_secret_2')).toBeUndefined();
    expect(intentIdOf('pi_1')).toBeUndefined();
  });
});

describe('reading GET /pagos/{id}', () => {
  it.each(['APROBADO', 'RECHAZADO', 'FALLIDO'])('%s is decided', (estado) => expect(isDecided(estado)).toBe(true));
  it.each(['PENDIENTE', 'REQUIERE_AUTENTICACION'])('%s is still to come', (estado) => expect(isDecided(estado)).toBe(false));

  it('reads the state and, when declined, its motivo', () => {
    expect(readPagoAnswer(pago('RECHAZADO', { motivo: 'autenticacion' }))).toEqual({ kind: 'estado', estado: 'RECHAZADO', motivo: 'autenticacion' });
    expect(readPagoAnswer(pago('APROBADO'))).toEqual({ kind: 'estado', estado: 'APROBADO' });
  });

  it('no answer, 429 and 5xx are worth asking again; 401 and 404 are not', () => {
    for (const answer of [undefined, { status: 429 }, { status: 500 }, { status: 503 }]) expect(readPagoAnswer(answer)).toEqual({ kind: 'transient' });
    expect(readPagoAnswer({ status: 404, json: { type: 'x' } })).toEqual({ kind: 'refused', status: 404 });
    expect(readPagoAnswer({ status: 401 })).toEqual({ kind: 'refused', status: 401 });
  });
});

describe('nextWaitStep (ask again, pause, or stop)', () => {
  const waiting = { kind: 'estado', estado: 'REQUIERE_AUTENTICACION' } as const;

  it('stops once decided, or refused, whatever time is left', () => {
    expect(nextWaitStep({ kind: 'estado', estado: 'APROBADO' }, 5, 60_000)).toEqual({ done: true, reason: 'decided' });
    expect(nextWaitStep({ kind: 'refused', status: 404 }, 5, 60_000)).toEqual({ done: true, reason: 'refused' });
    expect(nextWaitStep({ kind: 'estado', estado: 'RECHAZADO' }, 5, 0)).toEqual({ done: true, reason: 'decided' });
  });

  it('stops at the deadline while the payment still waits', () => {
    expect(nextWaitStep(waiting, 10_000, 0)).toEqual({ done: true, reason: 'deadline' });
    expect(nextWaitStep({ kind: 'transient' }, 10, -5)).toEqual({ done: true, reason: 'deadline' });
  });

  it('asks again at once after a held request, and pauses up to a second after a quick answer (a service without Prefer: wait)', () => {
    expect(nextWaitStep(waiting, 10_000, 50_000)).toEqual({ done: false, pauseMs: 0 });
    expect(nextWaitStep(waiting, 1_000, 50_000)).toEqual({ done: false, pauseMs: 0 });
    expect(nextWaitStep(waiting, 30, 50_000)).toEqual({ done: false, pauseMs: 970 });
    expect(nextWaitStep({ kind: 'transient' }, 0, 50_000)).toEqual({ done: false, pauseMs: 1_000 });
    expect(nextWaitStep(waiting, 30, 200)).toEqual({ done: false, pauseMs: 200 });
  });

  it('asks to be held 10 s at most, never past the deadline by a second or more, and at least 1 s', () => {
    expect([60_000, 10_000, 9_001, 3_000, 400, 0].map(preferWaitSeconds)).toEqual([10, 10, 10, 3, 1, 1]);
  });
});

describe('waitForOutcome (the loop, on a fake client and clock)', () => {
  /** A service that answers at once (no Prefer: wait) with `estados` in turn; the clock moves only by the pauses and `answerMs`. */
  function fakeService(estados: string[], answerMs: number) {
    let clock = 0;
    const asked: number[] = [];
    const pauses: number[] = [];
    const client = {
      getPago: async (_id: string, waitSeconds: number): Promise<PagosAnswer> => {
        asked.push(waitSeconds);
        clock += answerMs;
        const estado = estados.shift() ?? 'REQUIERE_AUTENTICACION';
        return { status: 200, headers: new Headers(), text: '', json: { estado } };
      },
    } as unknown as PagosClient;
    const environment = { now: () => clock, sleep: async (ms: number) => void (pauses.push(ms), (clock += ms)) };
    return { client, environment, asked, pauses };
  }

  it('against a service that ignores Prefer: wait, polls about once a second until decided', async () => {
    const { client, environment, asked, pauses } = fakeService(['REQUIERE_AUTENTICACION', 'REQUIERE_AUTENTICACION', 'APROBADO'], 20);
    const outcome = await waitForOutcome(client, 'p-1', 60_000, environment);
    expect(outcome).toMatchObject({ reason: 'decided', reading: { kind: 'estado', estado: 'APROBADO' } });
    expect(asked).toEqual([10, 10, 10]);
    expect(pauses).toEqual([980, 980]);
  });

  it('against a service that holds each request, asks again at once, and gives up at the deadline', async () => {
    const { client, environment, asked, pauses } = fakeService([], 10_000);
    const outcome = await waitForOutcome(client, 'p-1', 25_000, environment);
    expect(outcome).toMatchObject({ reason: 'deadline', reading: { kind: 'estado', estado: 'REQUIERE_AUTENTICACION' } });
    expect(asked).toEqual([10, 10, 5]);
    expect(pauses).toEqual([]);
  });
});

describe('the command line of 3-D Secure', () => {
  const pay = ['pay', '--orden', 'ORD-1', '--monto', '1999', '--moneda', 'EUR', '--token', 'pm_card_authenticationRequired'];

  it('hands the authentication off by default, waits 60 s, and knows npm start\'s processor', () => {
    expect(parseCliOptions(pay, {})).toMatchObject({ authenticate: undefined, outcomeWaitSeconds: 60, processorUrl: 'http://127.0.0.1:12111' });
  });

  it('--autenticar ok|falla, --procesador over PAGOS_PROCESADOR_URL, --esperar-s 0 allowed', () => {
    const env = { PAGOS_PROCESADOR_URL: 'http://127.0.0.1:4000' };
    expect(parseCliOptions([...pay, '--autenticar', 'falla', '--esperar-s', '0'], env)).toMatchObject({ authenticate: 'falla', outcomeWaitSeconds: 0, processorUrl: 'http://127.0.0.1:4000' });
    expect(parseCliOptions([...pay, '--autenticar', 'ok', '--procesador', 'http://p:1'], env)).toMatchObject({ authenticate: 'ok', processorUrl: 'http://p:1' });
  });

  it('refuses another outcome and a negative or fractional wait, naming the flag', () => {
    expect(() => parseCliOptions([...pay, '--autenticar', 'yes'], {})).toThrow('--autenticar must be ok or falla, got yes');
    expect(() => parseCliOptions([...pay, '--esperar-s=-1'], {})).toThrow('--esperar-s must be a non-negative whole number');
    expect(() => parseCliOptions([...pay, '--esperar-s', '1.5'], {})).toThrow('--esperar-s');
  });
});
