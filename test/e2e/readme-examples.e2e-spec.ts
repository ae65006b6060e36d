import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type AppProcess, startAppProcess } from '../support/app-process.js';
import { TEST_API_TOKENS } from '../support/clients.js';
import { embeddedProcessorUrlOf } from '../support/autenticacion.js';
import { checkAnswer } from '../support/contract.js';
import { examplesOf, httpDifferences, parseHttpAnswer, textDifferences } from '../support/readme-examples.js';
import { Shell } from '../support/shell.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * The README's examples, run as a newcomer runs them: in order, in one bash (variables carry over),
 * with Node, npm and curl, against the built service on a real port and real PostgreSQL. Changed
 * from what the README says, and nothing else: `localhost:3000` becomes the service's port and the
 * local processor's `127.0.0.1:12111` the address of the one embedded in it (the test starts the
 * service with LOCAL_PROCESSOR_PORT=0, as every test does: files run in parallel); the
 * service is started by the test (`npm start` lines are read for their variables, not run); and
 * `npm run client -- …` runs the client compiled once here (`tsc -p tsconfig.examples.json`, what the
 * npm script does on every call). curl reads a config file (CURL_HOME) that makes it quiet and
 * report each request's method and URL on stderr, so that each answer shown is also checked
 * against the OpenAPI document; it changes nothing curl sends. How answers are compared: see
 * test/support/readme-examples.ts (varying values such as ids and timestamps by shape).
 */
const README = readFileSync('README.md', 'utf8');
const CLIENT_README = readFileSync('examples/client/README.md', 'utf8');
// The demo token the README's examples use (API_TOKENS' default), next to the test clients.
const DEMO_API_TOKENS = `demo:demo-token-change-me-0001,${TEST_API_TOKENS}`;
// The README shows the default limit (RATE_LIMIT_REQUESTS, RATE_LIMIT_WINDOW_SECONDS), not the tests' own.
const README_DEFAULTS = { API_TOKENS: DEMO_API_TOKENS, RATE_LIMIT_REQUESTS: '300', RATE_LIMIT_WINDOW_SECONDS: '60', LOG_FORMAT: 'json' };
const START_LINE = /^((?:[A-Z_]+=\S+\s+)*)npm start\b.*$/m;
const CURLRC = 'silent\nshow-error\nwrite-out = "%{stderr}@@request %{method} %{url_effective}\\n"\n';
const CLIENT_MAIN = path.resolve('dist-examples/examples/client/main.js');
// Where the README's examples reach `npm start`'s embedded local processor (LOCAL_PROCESSOR_PORT's default).
const README_PROCESSOR = '127.0.0.1:12111';
// `npm run client -- …` is the compiled client; any other npm command in an example is a mistake here.
const NPM_FUNCTION = `npm() { if [ "$1 $2 $3" = "run client --" ]; then shift 3; "${process.execPath}" "${CLIENT_MAIN}" "$@"; else echo "the README test runs npm run client only, not: npm $*" >&2; return 127; fi; }`;

describe('the README examples, run as written', () => {
  let url: string;
  let service: AppProcess | undefined;
  let processorHost: string;
  let shell: Shell;
  let home: string;

  beforeAll(async () => {
    url = await createTestDatabase('readme_examples');
    execFileSync(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.examples.json']);
    home = mkdtempSync(path.join(tmpdir(), 'pagos-readme-'));
    writeFileSync(path.join(home, '.curlrc'), CURLRC);
    // In a directory of its own, so that the client's .data/client-pending.json is not the checkout's.
    shell = new Shell({ PATH: process.env.PATH, HOME: home, CURL_HOME: home }, home);
  });

  afterAll(async () => {
    shell?.close();
    await service?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /** Starts the service as the README's `VAR=value npm start` line does (stopping the one before), and points the shell and the client at it and its processor. */
  async function startAsReadmeSays(startLine: string): Promise<string> {
    await service?.stop();
    const variables = Object.fromEntries([...startLine.matchAll(/([A-Z_]+)=(\S+)/g)].map(([, name, value]) => [name!, value!]));
    service = await startAppProcess(url, { ...README_DEFAULTS, ...variables });
    const port = new URL(service.baseUrl).port;
    const processorUrl = embeddedProcessorUrlOf(service);
    processorHost = new URL(processorUrl).host;
    await shell.run(`export PAGOS_BASE_URL=http://localhost:${port} PAGOS_PROCESADOR_URL=${processorUrl}\n${NPM_FUNCTION}`);
    return port;
  }

  /** A block as run here: the service's port for 3000, the embedded processor for the README's. */
  const asRunHere = (commands: string, port: string): string =>
    commands.replaceAll('localhost:3000', `localhost:${port}`).replaceAll(README_PROCESSOR, processorHost);

  it('## API: every command succeeds and answers with the status, headers and body fields shown', async () => {
    const port = await startAsReadmeSays('npm start');
    const examples = examplesOf(README, 'API');
    expect(examples.length).toBeGreaterThanOrEqual(8);
    const drifted: { example: string; differences: string[] }[] = [];
    for (const example of examples) {
      expect(example.answer.language).toBe('http');
      // A command that fails ends the shell, and run() rejects naming the block.
      const { stdout, stderr } = await shell.run(asRunHere(example.commands, port));
      const served = parseHttpAnswer(stdout);
      const differences = httpDifferences(parseHttpAnswer(example.answer.text), served);
      if (differences.length > 0) drifted.push({ example: example.commands, differences });
      await checkAgainstContract(stderr, served);
    }
    expect(drifted).toEqual([]);
  });

  it('## A retrying client: the lost answer ends in the original 201, replayed, after a 409 in flight', async () => {
    const [example, ...others] = examplesOf(README, 'A retrying client');
    expect(others).toEqual([]);
    const startLine = START_LINE.exec(example!.commands);
    expect(startLine).not.toBeNull();
    await startAsReadmeSays(startLine![0]);

    const { stdout } = await shell.run(example!.commands.replace(START_LINE, ''));

    expect(textDifferences(example!.answer.text, stdout)).toEqual([]);
    expect(stdout).toMatch(/^attempt 1: no answer[^\n]*\n(attempt \d+: 409 Conflict [^\n]*idempotency-key-in-flight[^\n]*\n)+attempt \d+: 201 Created, Idempotent-Replayed: true -> final-answer$/m);
  });

  it('examples/client/README.md: the lost answer, an app killed mid-payment resumed on its next launch, the order already paid, 3-D Secure', async () => {
    const examples = ['The lost response, end to end', 'The app dies mid-payment', '3-D Secure'].flatMap((heading) => examplesOf(CLIENT_README, heading));
    expect(examples.length).toBeGreaterThanOrEqual(7);
    const port = await startAsReadmeSays(START_LINE.exec(examples[0]!.commands)![0]);
    const drifted: { example: string; differences: string[] }[] = [];
    for (const example of examples) {
      // The client exits 1 on a final refusal, 2 with no final answer and 3 while a payment waits for its customer, as documented: not a failed command here.
      const commands = asRunHere(example.commands.replace(START_LINE, ''), port);
      const { stdout, stderr } = await shell.run(`set +e\n${commands}\nset -e`);
      const differences = example.answer.language === 'http'
        ? httpDifferences(parseHttpAnswer(example.answer.text), parseHttpAnswer(stdout))
        : textDifferences(example.answer.text, stdout);
      if (differences.length > 0) drifted.push({ example: example.commands, differences });
      if (example.answer.language === 'http') await checkAgainstContract(stderr, parseHttpAnswer(stdout));
    }
    expect(drifted).toEqual([]);
  });

  /** The answer shown is the block's last request's (the ones before it, like `PAGO=$(curl -s …)`, feed it). */
  async function checkAgainstContract(stderr: string, served: ReturnType<typeof parseHttpAnswer>): Promise<void> {
    const [, method, requestUrl] = [...stderr.matchAll(/^@@request (\S+) (\S+)$/gm)].at(-1) ?? [];
    expect(requestUrl).toBeDefined();
    // The service is registered for the contract checks under 127.0.0.1, the address curl reached for localhost.
    const status = Number(served.statusLine.split(' ')[1]);
    const text = served.body;
    const json = served.headers.get('content-type')?.includes('json') && text !== '' ? JSON.parse(text) : undefined;
    await checkAnswer(requestUrl!.replace('//localhost:', '//127.0.0.1:'), method!, { status, headers: new Headers([...served.headers]), text, json });
  }
});
