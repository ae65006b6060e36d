import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { parseDockerfile } from '../support/dockerfile.js';
import { replayDockerfile, type ReplayedStage } from '../support/dockerfile-replay.js';

interface ComposeService {
  build?: unknown;
  command?: string[];
}

/**
 * `docker compose up --build` without Docker (none runs on the build machines): the Dockerfile's stages
 * replayed in a temporary folder (test/support/dockerfile-replay.ts: COPY exactly what Docker would
 * send, .dockerignore applied; the build stage's `nest build` really runs on those files; `npm ci` is
 * a link to this checkout's node_modules, installed from the same lock file), then every command
 * compose runs on the image started in the runtime stage's folder. Real: the files, tsc, node.
 */
describe('the Dockerfile, replayed without Docker', () => {
  const stages = parseDockerfile('Dockerfile');
  const services = (parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, ComposeService> }).services;
  let into: string;
  let build: ReplayedStage;
  let runtime: ReplayedStage;

  beforeAll(() => {
    into = mkdtempSync(join(tmpdir(), 'pagos-docker-replay-'));
    const replayed = replayDockerfile(stages, process.cwd(), into);
    build = replayed.get('build')!;
    runtime = [...replayed.values()].at(-1)!;
  }, 300_000);

  afterAll(() => {
    rmSync(into, { recursive: true, force: true });
  });

  it('its build stage compiles what it copies, and nothing else: the copies hold no test, no dist, no node_modules', () => {
    expect(build.copied).toEqual(expect.arrayContaining(['package-lock.json', 'tsconfig.json', 'src/main.ts', 'processor/main.ts']));
    expect(build.copied.filter((file) => /^(test|dist|node_modules|\.git)\//.test(file))).toEqual([]);
    expect(existsSync(join(build.workdir, 'dist/src/main.js'))).toBe(true);
  });

  // The image's CMD for the replicas, each service's own command for the rest.
  const commands = Object.entries(services)
    .filter(([, service]) => service.build !== undefined)
    .map(([name, service]) => [name, service.command ?? stages.at(-1)!.instructions.filter((i) => i.keyword === 'CMD').map((i) => JSON.parse(i.args) as string[])[0]!] as const);

  it.each(commands)('compose\'s %s runs a file the image holds: %j', (_name, command) => {
    expect(command[0]).toBe('node');
    expect(existsSync(join(runtime.workdir, command[1]!))).toBe(true);
  });

  // With the image's environment only (NODE_ENV=production, no DATABASE_URL), each stops at its
  // configuration, in one line: every module it imports was found.
  it.each(commands)('compose\'s %s loads in the image and stops at its configuration, in one line', (_name, command) => {
    const result = spawnSync(process.execPath, command.slice(1), {
      cwd: runtime.workdir, env: { PATH: process.env.PATH, ...runtime.env }, encoding: 'utf8', timeout: 60_000,
    });
    expect(result.stderr).not.toMatch(/Cannot find module|MODULE_NOT_FOUND/);
    expect({ status: result.status, lines: result.stderr.trim().split('\n').length }).toEqual({ status: 1, lines: 1 });
    expect(result.stderr).toMatch(/DATABASE_URL|API_TOKENS/);
  });
});
