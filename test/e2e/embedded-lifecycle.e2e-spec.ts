import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runMigrationScript, startAppProcess, type AppProcess, type StartOptions } from '../support/app-process.js';
import { freePort } from '../support/free-port.js';
import { ALICE } from '../support/clients.js';
import { get, nuevoPago, postPago } from '../support/http.js';
import { isRunning, processesMentioning } from '../support/processes.js';
import { waitUntil } from '../support/waiting.js';

// Three service starts (the first runs initdb) and a migration run, on a shared 2-core machine.
const LIFECYCLE_TIMEOUT_MS = 180_000;

/**
 * The embedded PostgreSQL outlives no service: the built service with no DATABASE_URL, on its own
 * data directory and port. Real: the service processes, SIGKILL and SIGINT, PostgreSQL, /proc.
 */
describe('the embedded PostgreSQL of a service', () => {
  const dataDir = path.resolve(`.data/test-lifecycle-${process.pid}`);
  const started: AppProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    env = { EMBEDDED_PG_DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) };
  });

  afterAll(async () => {
    await Promise.all(started.map((app) => app.stop('SIGKILL')));
    // A failed run leaves no PostgreSQL behind either; its folder stays to look into.
    const left = processesMentioning(dataDir);
    for (const pid of left) process.kill(pid, 'SIGINT');
    if (left.length === 0) rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (extraEnv: Record<string, string> = {}, options: StartOptions = {}): Promise<AppProcess> => {
    const app = await startAppProcess(undefined, { ...env, ...extraEnv }, options);
    started.push(app);
    return app;
  };
  const postmasterOf = (): number[] => processesMentioning(`-D ${dataDir}`);
  const infoLines = (app: AppProcess): string[] =>
    app
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .filter((line) => line.level === 30)
      .map((line) => line.msg);

  it('start, SIGKILL, start, SIGINT: the second service adopts the orphan, says so, and stops it; nothing of ours is left', async () => {
    const first = await start();
    expect(infoLines(first)[0]).toBe(`database: embedded PostgreSQL started on port ${env.EMBEDDED_PG_PORT}, data in ${dataDir}`);
    const [postmaster] = postmasterOf();
    expect(postmaster).toBeDefined();

    expect(await first.stop('SIGKILL')).toBeNull();
    expect(postmasterOf()).toEqual([postmaster]);

    const second = await start();
    expect(infoLines(second)[0]).toBe(
      `database: embedded PostgreSQL adopted on port ${env.EMBEDDED_PG_PORT}, data in ${dataDir}: PID ${postmaster}, ` +
        `left running by process ${first.child.pid}, which is gone; it stops with this one now`,
    );
    expect((await get(second.baseUrl, '/health/ready')).status).toBe(200);

    expect(await second.stop('SIGINT')).toBe(0);
    expect(infoLines(second).slice(-2)).toEqual(['SIGINT: finishing in-flight requests', 'stopped, and the embedded PostgreSQL with it']);
    // Its last act, removing postmaster.pid, came before the service's exit; its own exit may trail by a moment.
    await waitUntil(async () => !isRunning(postmaster!));
    expect(processesMentioning(dataDir)).toEqual([]);
    expect([first.child.pid!, second.child.pid!].filter(isRunning)).toEqual([]);
    expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
    expect(existsSync(`${dataDir}.owner`)).toBe(false);
  }, LIFECYCLE_TIMEOUT_MS);

  it('a second process of ours on the running service\'s cluster (the migration script) uses it and leaves it running', async () => {
    const service = await start();
    expect(infoLines(service)[0]).toBe(`database: embedded PostgreSQL started on port ${env.EMBEDDED_PG_PORT}, data in ${dataDir}`);
    const [postmaster] = postmasterOf();

    const migration = await runMigrationScript('run', undefined, env);
    expect(migration.code).toBe(0);
    expect(migration.output).toContain(
      `database: embedded PostgreSQL shared on port ${env.EMBEDDED_PG_PORT}, data in ${dataDir}: PID ${postmaster}, ` +
        `run by process ${service.child.pid}, which keeps it running when this one stops`,
    );
    expect(migration.output).toContain('no pending migrations');
    expect(postmasterOf()).toEqual([postmaster]);
    expect((await get(service.baseUrl, '/health/ready')).status).toBe(200);

    expect(await service.stop('SIGTERM')).toBe(0);
    await waitUntil(async () => !isRunning(postmaster!));
    expect(processesMentioning(dataDir)).toEqual([]);
  }, LIFECYCLE_TIMEOUT_MS);
  it('Ctrl-C in its terminal (SIGINT to its whole process group, and again from npm): the payment in flight still ends 201, then PostgreSQL stops with the service', async () => {
    // The local processor answers after 1.5 s: the payment is still at the processor when the signal comes.
    const service = await start({ GATEWAY_LATENCY_MS: '1500' }, { asTerminalJob: true });
    const [postmaster] = postmasterOf();
    const body = nuevoPago();
    const payment = postPago(service.baseUrl, { client: ALICE, key: randomUUID(), body });
    await waitUntil(async () => {
      const listed = await get(service.baseUrl, `/pagos?numeroOrden=${body.numeroOrden}`, ALICE);
      return (listed.json as unknown[]).length === 1;
    });

    // `npm start` forwards the terminal's Ctrl-C to the service, which has it from the terminal too: twice at once.
    const exited = once(service.child, 'exit');
    process.kill(-service.child.pid!, 'SIGINT');
    process.kill(-service.child.pid!, 'SIGINT');
    expect((await exited)[0]).toBe(0);
    expect((await payment).status).toBe(201);
    // PostgreSQL, in a group of its own, heard nothing of the Ctrl-C: it stopped only when stopped.
    expect(service.output()).not.toContain('terminating connection due to administrator command');
    const lines = infoLines(service);
    expect(lines.slice(lines.indexOf('SIGINT: finishing in-flight requests'))).toEqual([
      'SIGINT: finishing in-flight requests',
      'request completed',
      'stopped, and the embedded PostgreSQL with it',
    ]);
    await waitUntil(async () => !isRunning(postmaster!));
    expect(processesMentioning(dataDir)).toEqual([]);
  }, LIFECYCLE_TIMEOUT_MS);
});
