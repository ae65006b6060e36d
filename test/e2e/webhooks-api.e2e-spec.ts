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
    ['IPv4-compatible IPv6 loopback', 'https://[::127.0.0.1]/hook'],
    ['IPv4-translated IPv6 loopback', 'https://[::ffff:0:127.0.0.1]/hook'],
    ['NAT64 form of the metadata', 'https://[64:ff9b::169.254.169.254]/hook'],
    ['unresolvable', 'https://no-such-host.invalid/hook'],
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

  it('an unresolvable host and an internal one get the same text (no DNS oracle)', async () => {
    const [unresolvable, internal] = await Promise.all(['no-such-host.invalid', 'localhost'].map((host) => register(strict, { url: `https://${host}/hook`, eventos: ['pago.aprobado'] })));
    expect(unresolvable.json.motivo).toBe("url's host no-such-host.invalid is not allowed: it must resolve, and only to public addresses");
    expect(internal.json.motivo).toBe(unresolvable.json.motivo.replace('no-such-host.invalid', 'localhost'));
  });

  it.each([
    ['CR LF', 'https://93.184.215.14/hook\r\nforged: line'],
    ['ESC', 'https://93.184.215.14/\u001b[2J'],
    ['NUL', 'https://93.184.215.14/\u0000'],
    ['a lone surrogate', 'https://93.184.215.14/\ud800'],
  ])('a URL with %s is a 422 url-de-webhook-no-permitida (not a 500), stored under its key, even with insecure URLs allowed', async (_what, url) => {
    const key = randomUUID();
    for (const app of [strict, insecure]) {
      const refused = await register(app, { url, eventos: ['pago.aprobado'] }, app === strict ? key : randomUUID());
      expect(refused.status).toBe(422);
      expect(refused.json).toMatchObject({ type: 'https://pagos.dev/problems/url-de-webhook-no-permitida', motivo: 'url must not contain control characters' });
    }
    const replay = await register(strict, { url, eventos: ['pago.aprobado'] }, key);
    expect(replay.status).toBe(422);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('GET /webhooks pages with desde and limit: every endpoint once, oldest first, past the old 100', async () => {
    await db.query(`DELETE FROM webhook_endpoints WHERE client_id = $1`, [BOB.clientId]);
    // 130 of Bob's, written directly: more than one page of the default 100 (the cap is enforced on POST).
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO webhook_endpoints (id, client_id, url, event_types, secret, created_at)
       SELECT gen_random_uuid(), 'bob', 'https://93.184.215.14/hooks/' || n, '{pago.aprobado}', 'whsec_x', now() - make_interval(secs => 200 - n)
         FROM generate_series(1, 130) n ORDER BY n RETURNING id`,
    );
    const first = await get(strict.baseUrl, '/webhooks', BOB);
    expect(first.json.map((endpoint: { id: string }) => endpoint.id)).toEqual(rows.slice(0, 100).map((row) => row.id));
    const seen: string[] = [];
    let desde: string | undefined;
    for (;;) {
      const page = await get(strict.baseUrl, `/webhooks?limit=40${desde ? `&desde=${desde}` : ''}`, BOB);
      expect(page.status).toBe(200);
      seen.push(...page.json.map((endpoint: { id: string }) => endpoint.id));
      if (page.json.length < 40) break;
      desde = page.json.at(-1).id;
    }
    expect(seen).toEqual(rows.map((row) => row.id));

    const unknown = await get(strict.baseUrl, `/webhooks?desde=${randomUUID()}`, BOB);
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toBe('https://pagos.dev/problems/cursor-de-webhooks-desconocido');
    expect((await get(strict.baseUrl, `/webhooks?desde=${rows[0]!.id}`, ALICE)).status).toBe(404);
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'desde=nope']) expect((await get(strict.baseUrl, `/webhooks?${query}`, BOB)).status).toBe(400);
    await db.query(`DELETE FROM webhook_endpoints WHERE client_id = $1`, [BOB.clientId]);
  });
});
