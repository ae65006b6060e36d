import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { runAppProcessToExit, runMigrationScript, startAppProcess, type AppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { nuevoPago, postPago } from '../support/http.js';
import { runNodeScript } from '../support/node-script.js';
import { connect, createTestDatabase } from '../support/test-database.js';
import { MIGRATIONS } from '../../migrations/index.js';

// A production environment complete but for the variable each case takes away (nothing listens at port 1).
const PRODUCTION = {
  NODE_ENV: 'production', API_TOKENS: 'shop:a-real-secret-token-0001', DATABASE_URL: 'postgres://127.0.0.1:1/x',
  STRIPE_SECRET_KEY: 'sk_live_abcdefgh12345678', STRIPE_WEBHOOK_SECRET: 'whsec_abcdefgh12345678',
};

/** Start-up of the built service as an operator runs it. */
describe('starting the service', () => {
  const started: AppProcess[] = [];

  afterAll(async () => {
    await Promise.all(started.map((app) => app.stop('SIGKILL')));
  });

  it.each([
    ['an unparsable DATABASE_URL', { DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    ['a negative TTL', { DATABASE_URL: 'postgres://127.0.0.1:1/x', IDEMPOTENCY_TTL_SECONDS: '-5' }, 'IDEMPOTENCY_TTL_SECONDS'],
    ['a TTL shorter than the lock timeout', { DATABASE_URL: 'postgres://127.0.0.1:1/x', IDEMPOTENCY_TTL_SECONDS: '120', IDEMPOTENCY_LOCK_TIMEOUT_SECONDS: '600' }, 'IDEMPOTENCY_TTL_SECONDS'],
    ['NODE_ENV=production without API_TOKENS (the demo token)', { ...PRODUCTION, API_TOKENS: '' }, 'API_TOKENS'],
    ['NODE_ENV=production with the demo token', { ...PRODUCTION, API_TOKENS: 'demo:demo-token-change-me-0001' }, 'API_TOKENS'],
    ['NODE_ENV=production without DATABASE_URL (the embedded PostgreSQL)', { ...PRODUCTION, DATABASE_URL: '' }, 'DATABASE_URL'],
    ['NODE_ENV=production with WEBHOOKS_ALLOW_INSECURE_URLS=true', { ...PRODUCTION, WEBHOOKS_ALLOW_INSECURE_URLS: 'true' }, 'WEBHOOKS_ALLOW_INSECURE_URLS'],
  ])('fails with exit code 1 and one line naming the variable for %s', async (_name, env, variable) => {
    const { code, stderr } = await runAppProcessToExit(env);
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
    expect(lines[0]).not.toMatch(/\s+at\s/);
  });

  it('two replicas starting at once on an empty database migrate it once and both serve', async () => {
    const url = await createTestDatabase('startup');
    const replicas = await Promise.all([startAppProcess(url), startAppProcess(url)]);
    started.push(...replicas);
    const db = await connect(url);
    try {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM migrations`);
      expect(rows[0].n).toBe(MIGRATIONS.length);
    } finally {
      await db.end();
    }
    for (const replica of replicas) {
      const created = await postPago(replica.baseUrl, { client: ALICE, key: crypto.randomUUID(), body: nuevoPago() });
      expect(created.status).toBe(201);
    }
  });

  it('a port already in use: one line saying so and naming PORT, no stack, exit code 1', async () => {
    const url = await createTestDatabase('startup_port_in_use');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '0.0.0.0', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const { code, stdout, stderr } = await runNodeScript(path.resolve('dist/src/main.js'), [], {
        DATABASE_URL: url, PORT: String(port), LOCAL_PROCESSOR_PORT: '0', LOG_FORMAT: 'json',
      });
      expect(code).toBe(1);
      const errors = (stdout + stderr).split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level >= 50);
      expect(errors.map((line) => line.msg)).toEqual([`port ${port} is in use: stop what listens there, or set PORT to a free port`]);
      expect(stdout + stderr).not.toMatch(/\s+at\s|EADDRINUSE/);
    } finally {
      holder.close();
    }
  });

  it('SIGTERM closes the service cleanly with exit code 0', async () => {
    const url = await createTestDatabase('startup_sigterm');
    const app = await startAppProcess(url);
    expect(await app.stop('SIGTERM')).toBe(0);
  });

  it('the migration script applies every migration, reverts the last one, and applies it again', async () => {
    const url = await createTestDatabase('startup_migrations');
    const query = async (sql: string): Promise<string[]> => {
      const db = await connect(url);
      try {
        return (await db.query(sql)).rows.map((row) => Object.values(row)[0] as string);
      } finally {
        await db.end();
      }
    };
    const tables = () => query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'migrations' ORDER BY 1`);
    const applied = () => query(`SELECT name FROM migrations ORDER BY id`);
    const all = MIGRATIONS.map((migration) => migration.name);
    expect(await runMigrationScript('run', url)).toMatchObject({ code: 0, output: expect.stringContaining('applied: ') });
    expect(await tables()).toEqual(expect.arrayContaining(['idempotency_keys', 'pagos', 'reembolsos']));
    expect(await applied()).toEqual(all);
    expect(await runMigrationScript('revert', url)).toMatchObject({ code: 0 });
    expect(await applied()).toEqual(all.slice(0, -1));
    expect(await runMigrationScript('run', url)).toMatchObject({ code: 0, output: expect.stringContaining(all.at(-1)!) });
    expect(await runMigrationScript('run', url)).toMatchObject({ code: 0, output: expect.stringContaining('no pending migrations') });
  });
});
