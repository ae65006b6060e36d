import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { ALICE } from '../support/clients.js';
import { checkAnswersOf, Contract, takeViolations } from '../support/contract.js';
import { checkedFetch, get, type HttpResult } from '../support/http.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * The document the running service serves, judged by tools nobody on the team wrote: Redocly CLI
 * (`recommended`, see redocly.yaml) and Spectral (`spectral:oas`, see .spectral.yaml), both pinned dev
 * dependencies run from node_modules/.bin. Zero errors; the warnings kept are exactly these, each with
 * its reason, so a new one fails until it is fixed or listed here.
 */
const KEPT_REDOCLY_WARNINGS = [
  // The probes and the scrape take no input and no credentials: no request to them is a client error.
  { rule: 'operation-4xx-response', at: '#/paths/~1health~1live/get/responses' },
  { rule: 'operation-4xx-response', at: '#/paths/~1health~1ready/get/responses' },
  { rule: 'operation-4xx-response', at: '#/paths/~1metrics/get/responses' },
];
const KEPT_SPECTRAL_WARNINGS: Array<{ rule: string; at: string }> = [];

const SPECTRAL_SEVERITY = ['error', 'warn', 'info', 'hint'] as const;

interface Finding {
  readonly rule: string;
  readonly severity: string;
  readonly at: string;
  readonly message: string;
}

describe('the served OpenAPI document, linted and used as a contract (real app, real HTTP)', () => {
  let app: AppProcess;
  let document: any;
  let folder: string;
  let documentFile: string;

  beforeAll(async () => {
    app = await startAppProcess(await createTestDatabase('openapi_tooling'));
    document = (await get(app.baseUrl, '/docs/openapi.json')).json;
    folder = await mkdtemp(path.join(tmpdir(), 'pagos-openapi-'));
    documentFile = path.join(folder, 'openapi.json');
    await writeFile(documentFile, JSON.stringify(document, null, 2));
  });

  afterAll(async () => {
    await app?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('Redocly CLI (recommended rules): no errors, and only the warnings kept on purpose', async () => {
    const { stdout } = await run('redocly', ['lint', documentFile, '--config', 'redocly.yaml', '--format', 'json']);
    const findings: Finding[] = JSON.parse(stdout).problems.map((problem: any) => ({
      rule: problem.ruleId, severity: problem.severity, at: problem.location[0].pointer, message: problem.message,
    }));
    expect(findings.filter((finding) => finding.severity === 'error')).toEqual([]);
    expect(sorted(findings.map(({ rule, at }) => ({ rule, at })))).toEqual(sorted(KEPT_REDOCLY_WARNINGS));
  });

  it('Spectral (spectral:oas): no errors, and only the warnings kept on purpose', async () => {
    const { stdout } = await run('spectral', ['lint', documentFile, '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet']);
    const findings: Finding[] = JSON.parse(stdout).map((result: any) => ({
      rule: result.code, severity: SPECTRAL_SEVERITY[result.severity], at: `#/${result.path.join('/')}`, message: result.message,
    }));
    expect(findings.filter((finding) => finding.severity === 'error')).toEqual([]);
    expect(sorted(findings.filter((finding) => finding.severity === 'warn').map(({ rule, at }) => ({ rule, at })))).toEqual(sorted(KEPT_SPECTRAL_WARNINGS));
  });

  describe('the response validator every end-to-end answer goes through (test/support/contract.ts)', () => {
    const inFlight = {
      type: 'https://pagos.dev/problems/idempotency-key-in-flight',
      title: 'A request with this Idempotency-Key is in progress',
      status: 409,
      detail: 'The first request with this Idempotency-Key has not finished. Retry with the same key after 1 second(s) to get its result.',
    };
    const answer = (status: number, headers: Record<string, string>, body: unknown): HttpResult => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      return { status, headers: new Headers({ 'x-request-id': 'r-1', ...headers }), text, json: typeof body === 'string' ? undefined : body };
    };
    const problem = { 'content-type': 'application/problem+json; charset=utf-8' };

    it('lets the documented answers through: an in-flight 409 without pagoExistenteId, a stored 409 replayed', () => {
      const contract = new Contract(document);
      expect(contract.violationsOf('POST', '/pagos', answer(409, { ...problem, 'retry-after': '1' }, inFlight))).toEqual([]);
      const paid = { type: 'https://pagos.dev/problems/orden-ya-pagada', title: 'Order already paid', status: 409, detail: 'Order X already has approved payment Y.', pagoExistenteId: 'Y' };
      expect(contract.violationsOf('POST', '/pagos', answer(409, { ...problem, 'idempotent-replayed': 'true' }, paid))).toEqual([]);
      expect(contract.violationsOf('GET', '/no-such-route', answer(404, problem, { ...inFlight, status: 404 }))).toEqual([]);
    });

    it.each([
      ['a problem type the status does not answer', 409, problem, { ...inFlight, type: 'https://pagos.dev/problems/idempotency-key-reused' }, /body:/],
      ['an order conflict without the payment it names', 409, problem, { ...inFlight, type: 'https://pagos.dev/problems/orden-ya-pagada', title: 'Order already paid' }, /body:/],
      ['an undocumented status', 418, problem, inFlight, /status 418 is not documented/],
      ['an undeclared header', 409, { ...problem, 'x-powered-by': 'nest' }, inFlight, /header x-powered-by is not declared/],
      ['a Retry-After that is not delay-seconds', 409, { ...problem, 'retry-after': 'soon' }, inFlight, /header retry-after/],
      ['a problem sent as application/json', 409, { 'content-type': 'application/json' }, inFlight, /content type "application\/json" is not documented/],
      ['a body that is not JSON', 409, problem, 'conflict', /is not JSON/],
    ])('catches %s', (_name, status, headers, body, expected) => {
      expect(new Contract(document).violationsOf('POST', '/pagos', answer(status, headers, body))).toEqual([expect.stringMatching(expected)]);
    });

    it('is wired into the helpers: a drifted answer throws, and is kept for contract-setup.ts to fail the test with', async () => {
      // Stands in for a pagos whose GET /pagos/{id} lost a field of its answer.
      const drifted = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'r-1' }).end('{"id":"x"}'));
      drifted.listen(0, '127.0.0.1');
      await once(drifted, 'listening');
      try {
        const url = `http://127.0.0.1:${(drifted.address() as AddressInfo).port}`;
        await checkAnswersOf(url);
        await expect(get(url, '/pagos/0b6c5f0e-6a54-4f1e-9a3b-3b8f5c0f2d11', ALICE)).rejects.toThrow(/GET \/pagos\/0b6c.* answered 200, which the OpenAPI document does not allow/);
        await expect(checkedFetch(`${url}/pagos`)).rejects.toThrow(/body: data must be array/);
        expect(takeViolations()).toEqual([expect.stringContaining("must have required property 'numeroOrden'"), expect.stringContaining('must be array')]);
      } finally {
        drifted.close();
      }
    });

    it('catches a missing X-Request-Id, and an answer from a route the document lacks', () => {
      const contract = new Contract(document);
      const withoutId = answer(409, problem, inFlight);
      withoutId.headers.delete('x-request-id');
      expect(contract.violationsOf('POST', '/pagos', withoutId)).toEqual(['required header x-request-id is missing']);
      expect(contract.violationsOf('GET', '/facturas', answer(200, { 'content-type': 'application/json' }, []))).toEqual(['the document has no operation GET /facturas']);
    });
  });
});

function sorted<T>(items: T[]): T[] {
  return [...items].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** Runs a CLI from node_modules/.bin; resolves with its output whatever its exit code (findings make it non-zero). */
async function run(command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  // No usage reports or update checks from a test run.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  const child = spawn(path.resolve('node_modules/.bin', command), args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (!stdout.trim().startsWith('{') && !stdout.trim().startsWith('[')) throw new Error(`${command} exited with ${code} and no JSON report:\n${stdout}\n${stderr}`);
  return { stdout, stderr };
}
