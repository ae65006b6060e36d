import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE, BOB, type TestClient } from '../support/clients.js';
import { get, postJson } from '../support/http.js';
import { connect, createTestDatabase } from '../support/test-database.js';

const CAP = 3;

/**
 * Real: three service processes on one PostgreSQL: URL checks on; off (WEBHOOKS_ALLOW_INSECURE_URLS);
 * and on with a cap of 3 endpoints per client and 25 registrations a minute.
 */
describe('the /webhooks API: endpoints per client, secret shown once, no URL into internal networks', () => {
  let strict: AppProcess;
  let insecure: AppProcess;
  let capped: AppProcess;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase('webhooks-api');
    strict = await startAppProcess(url);
    insecure = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false', WEBHOOKS_ALLOW_INSECURE_URLS: 'true' });
    capped = await startAppProcess(url, { DB_MIGRATIONS_RUN: 'false', WEBHOOKS_MAX_PER_CLIENT: String(CAP), RATE_LIMIT_REQUESTS: '25', RATE_LIMIT_WINDOW_SECONDS: '60' });
    db = await connect(url);
  });

  afterAll(async () => {
    await db?.end();
    await capped?.stop();
    await insecure?.stop();
    await strict?.stop();
  });

  const register = (app: AppProcess, body: unknown, key = randomUUID(), client: TestClient = ALICE) => postJson(app.baseUrl, '/webhooks', { client, key, body });
  const remove = (app: AppProcess, id: string, client: TestClient = ALICE) =>
    fetch(`${app.baseUrl}/webhooks/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${client.token}` } });

  it('POST /webhooks answers 201 with the whsec_ secret once; a replay of the key answers the same secret; GET never shows it', async () => {
    const key = randomUUID();
    const body = { url: 'https://93.184.215.14/hooks', eventos: ['pago.aprobado', 'reembolso.aprobado'] };
    const created = await register(strict, body, key);
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), url: body.url, eventos: body.eventos, estado: 'ACTIVO', deshabilitadoEn: null,
      creadoEn: expect.stringMatching(/Z$/), secreto: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    });
    const replay = await register(strict, body, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(created.text);

    const { secreto, ...shown } = created.json;
    expect(secreto).toBeDefined();
    expect((await get(strict.baseUrl, `/webhooks/${created.json.id}`, ALICE)).json).toEqual(shown);
    expect((await get(strict.baseUrl, '/webhooks', ALICE)).json).toContainEqual(shown);
    expect((await get(strict.baseUrl, `/webhooks/${created.json.id}`, BOB)).status).toBe(404);
    expect((await get(strict.baseUrl, '/webhooks', BOB)).json).toEqual([]);
    expect((await remove(strict, created.json.id, BOB)).status).toBe(404);
    expect((await remove(strict, created.json.id)).status).toBe(204);
    expect((await get(strict.baseUrl, `/webhooks/${created.json.id}`, ALICE)).status).toBe(404);
    expect((await remove(strict, created.json.id)).status).toBe(404);
  });

  it.each([
    ['loopback', 'https://127.0.0.1/hook'],
    ['loopback by name', 'https://localhost/hook'],
    ['IPv6 loopback', 'https://[::1]/hook'],
    ['private', 'https://10.1.2.3/hook'],
    ['private 192.168', 'https://192.168.1.10/hook'],
    ['link-local (cloud metadata)', 'https://169.254.169.254/latest/meta-data'],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook'],
    ['unique local IPv6', 'https://[fd00::1]/hook'],
    ['plain http', 'http://93.184.215.14/hook'],
  ])('a URL to a %s address is refused with 422 url-de-webhook-no-permitida', async (_what, url) => {
    const refused = await register(strict, { url, eventos: ['pago.aprobado'] });
    expect(refused.status).toBe(422);
    expect(refused.json.type).toBe('https://pagos.dev/problems/url-de-webhook-no-permitida');
  });

  it('WEBHOOKS_ALLOW_INSECURE_URLS=true allows http on loopback (local development and tests)', async () => {
    const created = await register(insecure, { url: 'http://127.0.0.1:9/hook', eventos: ['pago.rechazado'] });
    expect(created.status).toBe(201);
  });

  it('an unknown event type, no event type or a malformed URL is a 400 validation problem', async () => {
    for (const body of [{ url: 'https://93.184.215.14/', eventos: ['pago.creado'] }, { url: 'https://93.184.215.14/', eventos: [] }, { url: 'nope', eventos: ['pago.aprobado'] }]) {
      const refused = await register(strict, body);
      expect([400, 422]).toContain(refused.status);
      if (body.url !== 'nope') expect(refused.json.type).toBe('https://pagos.dev/problems/validation-failed');
    }
  });

  it(`20 registrations at once against a cap of ${CAP}: exactly ${CAP} are created, the rest get 409 limite-de-webhooks`, async () => {
    await db.query(`DELETE FROM webhook_endpoints WHERE client_id = $1`, [ALICE.clientId]);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => register(capped, { url: `https://93.184.215.14/hooks/${i}`, eventos: ['pago.aprobado'] })));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(CAP).fill(201), ...Array(20 - CAP).fill(409)]);
    const refused = answers.find((answer) => answer.status === 409)!;
    expect(refused.json).toMatchObject({ type: 'https://pagos.dev/problems/limite-de-webhooks', status: 409, limite: CAP });
    expect(refused.json.detail).toMatch(/DELETE \/webhooks/);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE client_id = $1`, [ALICE.clientId]);
    expect(rows[0]!.n).toBe(CAP);

    // Deleting one makes room for one more.
    const created = answers.find((answer) => answer.status === 201)!;
    expect((await remove(capped, created.json.id)).status).toBe(204);
    expect((await register(capped, { url: 'https://93.184.215.14/hooks/again', eventos: ['pago.aprobado'] })).status).toBe(201);
  });

  it('POST /webhooks is rate-limited per client like the other POSTs: X-RateLimit-* headers, then 429 with Retry-After', async () => {
    const answers = [];
    for (let i = 0; i < 26; i++) answers.push(await register(capped, { url: `https://93.184.215.14/limited/${i}`, eventos: ['pago.aprobado'] }, randomUUID(), BOB));
    expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe('25');
    expect(answers[0]!.headers.get('x-ratelimit-remaining')).toBe('24');
    expect(answers.slice(0, 25).map((answer) => answer.status)).not.toContain(429);
    expect(answers[25]!.status).toBe(429);
    expect(Number(answers[25]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
