import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startAppProcess, type AppProcess } from '../support/app-process.js';
import { createTestDatabase } from '../support/test-database.js';
import { MIGRATIONS } from '../../migrations/index.js';

interface LogLine {
  readonly level: number;
  readonly context?: string;
  readonly msg: string;
  readonly req?: unknown;
}

const INFO = 30;
const WARN = 40;
const DEBUG = 20;
const NO_REAL_MONEY = 'no Stripe key configured: payments go to the local processor, and no real money moves';

/**
 * What the built service logs from start to stop, as a person reads it (DATABASE_URL here; the
 * embedded PostgreSQL's database line is in embedded-lifecycle.e2e-spec.ts). Real: the service, PostgreSQL.
 */
describe('the start and stop log', () => {
  let url: string;
  const started: AppProcess[] = [];

  beforeAll(async () => {
    url = await createTestDatabase('start_log');
  });

  afterAll(async () => {
    await Promise.all(started.map((app) => app.stop('SIGKILL')));
  });

  const start = async (env: Record<string, string>): Promise<AppProcess> => {
    const app = await startAppProcess(url, env);
    started.push(app);
    return app;
  };
  // Without the request lines (the test helpers fetch the OpenAPI document once).
  const jsonLines = (app: AppProcess): LogLine[] =>
    app
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.req === undefined);
  const database = (): string => {
    const { hostname, port, pathname } = new URL(url);
    return `database: ${hostname}:${port || '5432'}${pathname} (DATABASE_URL)`;
  };
  const listening = (app: AppProcess): string => {
    const port = new URL(app.baseUrl).port;
    return `pagos listening on port ${port} (0.0.0.0): http://localhost:${port}, API docs at http://localhost:${port}/docs`;
  };

  it('at info, one line per milestone and no wiring; SIGTERM ends with stopped', async () => {
    const app = await start({ LOG_LEVEL: 'info' });
    expect(await app.stop('SIGTERM')).toBe(0);
    expect(jsonLines(app).map(({ level, msg }) => ({ level, msg }))).toEqual([
      { level: INFO, msg: database() },
      { level: INFO, msg: `migrations: applied ${MIGRATIONS.length} (the last ${MIGRATIONS.at(-1)!.name})` },
      { level: INFO, msg: expect.stringMatching(/^processor: the local processor, in this process, at http:\/\/127\.0\.0\.1:\d+$/) },
      { level: WARN, msg: NO_REAL_MONEY },
      { level: INFO, msg: listening(app) },
      { level: INFO, msg: 'SIGTERM: finishing in-flight requests' },
      { level: INFO, msg: 'stopped' },
    ]);
    expect(app.output()).not.toContain('postgres:postgres@');
  });

  it('at debug, Nest\'s wiring too; a migrated database is up to date; SIGINT ends with stopped', async () => {
    const app = await start({ LOG_LEVEL: 'debug' });
    expect(await app.stop('SIGINT')).toBe(0);
    const lines = jsonLines(app);
    const wiring = lines.filter((line) => ['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication'].includes(line.context!));
    expect(wiring.map((line) => line.level)).toEqual(wiring.map(() => DEBUG));
    expect(wiring.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['Starting Nest application...', 'PagosModule dependencies initialized', 'Mapped {/pagos, POST} route', 'Nest application successfully started']),
    );
    expect(lines.filter((line) => line.level >= INFO).map((line) => line.msg)).toEqual([
      database(),
      `migrations: up to date (${MIGRATIONS.length} applied earlier)`,
      expect.stringMatching(/^processor: the local processor/),
      NO_REAL_MONEY,
      listening(app),
      'SIGINT: finishing in-flight requests',
      'stopped',
    ]);
  });

  it('with WEBHOOKS_ALLOW_INSECURE_URLS=true, a warning says the SSRF protection is off', async () => {
    const app = await start({ LOG_LEVEL: 'info', DB_MIGRATIONS_RUN: 'false', WEBHOOKS_ALLOW_INSECURE_URLS: 'true' });
    expect(await app.stop('SIGTERM')).toBe(0);
    const warnings = jsonLines(app).filter((line) => line.level === WARN).map((line) => line.msg);
    expect(warnings).toEqual([
      NO_REAL_MONEY,
      'WEBHOOKS_ALLOW_INSECURE_URLS=true: webhook URLs may use http and reach internal addresses (no SSRF protection); for development and tests only',
    ]);
  });

  it('with LOG_FORMAT=pretty, the same lines for a person', async () => {
    const app = await start({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'info', DB_MIGRATIONS_RUN: 'false' });
    expect(await app.stop('SIGTERM')).toBe(0);
    const lines = app
      .output()
      .trim()
      .split('\n')
      .filter((line) => !line.includes('request completed'));
    expect(lines.map((line) => line.replace(/^\[[\d:.]+\] (\w+) \(\d+\): (.*?)( \{"context":"\w+"\})?$/, '$1 $2'))).toEqual([
      `INFO ${database()}`,
      'INFO migrations: not run at start (DB_MIGRATIONS_RUN=false)',
      expect.stringMatching(/^INFO processor: the local processor/),
      `WARN ${NO_REAL_MONEY}`,
      `INFO ${listening(app)}`,
      'INFO SIGTERM: finishing in-flight requests',
      'INFO stopped',
    ]);
  });
});
