import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { type BuildTarget, buildIfStale, TARGETS } from '../../scripts/build-if-stale.mjs';

/**
 * scripts/build-if-stale.mjs, which `npm run ops`, `npm start` and `npm run client` run first: a
 * build happens when, and only when, what the compiler reads has changed. Real: the files, in a
 * temporary folder. Fake: the build command, which records that it ran.
 */
describe('build if stale', () => {
  const target: BuildTarget = { inputs: ['src', 'tsconfig.json'], outDir: 'dist', command: ['nest', 'build'] };
  let root: string;
  let builds: number;

  const write = (file: string, text: string): void => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  const build = (options: { always?: boolean; run?: (root: string, command: readonly string[]) => number } = {}): boolean =>
    buildIfStale(root, target, {
      always: options.always,
      run:
        options.run ??
        (() => {
          builds++;
          write('dist/src/main.js', 'compiled');
          return 0;
        }),
    });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'pagos-build-if-stale-'));
    builds = 0;
    write('src/main.ts', 'export const a = 1;');
    write('src/ops/main.ts', 'export const b = 2;');
    write('tsconfig.json', '{}');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds the first time, then not again while nothing changed', () => {
    expect(build()).toBe(true);
    expect(build()).toBe(false);
    expect(builds).toBe(1);
  });

  it.each([
    ['an edited source', () => write('src/ops/main.ts', 'export const b = 3;')],
    ['a new source', () => write('src/ops/extra.ts', 'export {};')],
    ['a deleted source', () => rmSync(join(root, 'src/ops/main.ts'))],
    ['a renamed source', () => renameSync(join(root, 'src/ops/main.ts'), join(root, 'src/ops/other.ts'))],
    ['an edited input file (tsconfig.json)', () => write('tsconfig.json', '{ "compilerOptions": {} }')],
    ['a deleted input file', () => rmSync(join(root, 'tsconfig.json'))],
    ['an emptied output folder', () => rmSync(join(root, 'dist'), { recursive: true })],
  ])('%s builds again', (_change, change) => {
    build();
    change();
    expect(build()).toBe(true);
    expect(builds).toBe(2);
  });

  it.each([
    ['a source touched but unchanged (the output could not differ)', () => utimesSync(join(root, 'src/main.ts'), new Date(), new Date(Date.now() + 60_000))],
    ['a file the compiler does not read (not .ts)', () => write('src/README.md', '# notes')],
    ['a file outside the inputs', () => write('test/main.spec.ts', 'export {};')],
  ])('%s does not build', (_change, change) => {
    build();
    change();
    expect(build()).toBe(false);
    expect(builds).toBe(1);
  });

  it('a source edited while the build runs builds again next time: the stamp is of what the build read', () => {
    build({
      run: () => {
        write('dist/src/main.js', 'compiled');
        write('src/main.ts', 'export const a = 2;');
        return 0;
      },
    });
    expect(build()).toBe(true);
  });

  it('a failed build throws and leaves no stamp, so the next call builds again', () => {
    build();
    write('src/main.ts', 'export const a: number = "not a number";');
    expect(() => build({ run: () => 2 })).toThrow('nest build failed (exit status 2)');
    expect(build()).toBe(true);
  });

  it('says why it builds: no build yet on a fresh clone (or after a failed build), then changed sources, or asked for', () => {
    const reasons: string[] = [];
    const onBuild = (_target: BuildTarget, reason: string): void => void reasons.push(reason);
    const run = (): number => (write('dist/src/main.js', 'compiled'), 0);
    buildIfStale(root, target, { run, onBuild });
    write('src/main.ts', 'export const a = 2;');
    buildIfStale(root, target, { run, onBuild });
    buildIfStale(root, target, { run, onBuild, always: true });
    write('src/main.ts', 'export const a = 3;');
    expect(() => buildIfStale(root, target, { run: () => 1, onBuild })).toThrow();
    buildIfStale(root, target, { run, onBuild });
    expect(reasons).toEqual(['no build yet', 'its sources changed since the last build', 'asked for', 'its sources changed since the last build', 'no build yet']);
  });

  it('--always builds even when nothing changed, and leaves the stamp for the next call', () => {
    build();
    expect(build({ always: true })).toBe(true);
    expect(build()).toBe(false);
    expect(builds).toBe(2);
  });
});

describe('the build targets name what their compilers read', () => {
  const repository = (): string => join(dirname(expect.getState().testPath!), '..', '..');
  const json = (file: string): Record<string, any> => JSON.parse(readFileSync(join(repository(), file), 'utf8'));
  /** `src/**\/*.ts` → `src`: the folder an include glob reads `.ts` files from. */
  const foldersOf = (include: string[]): string[] => include.map((glob) => glob.replace(/\/\*\*\/\*\.ts$/, ''));

  it('service: nest-cli.json, its tsconfig and every folder that tsconfig includes', () => {
    const nest = json('nest-cli.json');
    expect(nest.compilerOptions.deleteOutDir).toBe(true);
    const tsconfig = json(nest.compilerOptions.tsConfigPath);
    expect(TARGETS.service.outDir).toBe(tsconfig.compilerOptions.outDir.replace(/^\.\//, ''));
    expect(TARGETS.service.inputs).toEqual(
      expect.arrayContaining(['nest-cli.json', nest.compilerOptions.tsConfigPath, 'package-lock.json', ...foldersOf(tsconfig.include)]),
    );
  });

  it('examples: tsconfig.examples.json, the tsconfig it extends and the folders it includes', () => {
    const tsconfig = json('tsconfig.examples.json');
    expect(TARGETS.examples.command).toEqual(['tsc', '-p', 'tsconfig.examples.json']);
    expect(TARGETS.examples.outDir).toBe(tsconfig.compilerOptions.outDir.replace(/^\.\//, ''));
    expect(TARGETS.examples.inputs).toEqual(
      expect.arrayContaining(['tsconfig.examples.json', tsconfig.extends.replace(/^\.\//, ''), 'package-lock.json', ...foldersOf(tsconfig.include)]),
    );
  });
});
