import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

/**
 * The modules' imports form floors: each folder of src/ may import the folders written down for it
 * below, and nothing else of src/ (the files at src/'s top compose the app and may import any of
 * them). "idempotency/ imports nothing from pagos/, gateway/, auth/" — and nothing from reembolsos/:
 * the second idempotent route must not have taught the mechanism anything about refunds. Reads the
 * sources as text (nothing runs).
 */
function srcDir(): string {
  const specPath = expect.getState().testPath;
  if (specPath === undefined) throw new Error('Jest did not report the path of this spec');
  return join(dirname(specPath), '..', '..', 'src');
}

/**
 * Every folder of src/ and the folders it may import, floor by floor from the ground up. Features
 * report through events (`*.events.ts`) and the observers above them listen: metrics/ counts, and
 * app.ts hands the idempotency outcome to the request line; the problem vocabulary is on the ground
 * floor, under every module with errors to answer. A new folder, or a new direction, is written here.
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  config: [],
  problems: [],
  // What the entry points (main.ts, the ops CLI, the bench) start before the app: the local processor.
  bootstrap: ['config'],
  // Cron jobs that log and report every failed run (the purge, the reconciler).
  scheduling: [],
  database: ['config'],
  auth: ['config', 'problems'],
  logging: ['config', 'auth'],
  // The payment processor's port and adapter: below the features that charge and refund through it.
  gateway: ['config', 'database'],
  http: ['problems', 'database', 'logging'],
  idempotency: ['problems', 'database', 'http', 'scheduling'],
  'rate-limit': ['config', 'problems', 'auth'],
  health: ['problems', 'auth', 'http'],
  // The outbox and the event feed: generic, below the features that declare events.
  eventos: ['problems', 'database', 'auth', 'http', 'scheduling'],
  // The processor's webhooks in: verification and once-only application; features register their handlers.
  'processor-webhooks': ['config', 'problems', 'database', 'auth', 'gateway', 'http', 'scheduling'],
  pagos: ['config', 'problems', 'database', 'auth', 'gateway', 'http', 'idempotency', 'rate-limit', 'scheduling', 'eventos', 'processor-webhooks'],
  reembolsos: ['problems', 'database', 'auth', 'gateway', 'http', 'idempotency', 'rate-limit', 'pagos', 'eventos', 'processor-webhooks'],
  // Webhook endpoints (and their delivery): generic, told the event types by the app.
  webhooks: ['problems', 'database', 'auth', 'http', 'idempotency', 'rate-limit', 'eventos'],
  metrics: ['problems', 'auth', 'database', 'http', 'idempotency', 'rate-limit', 'pagos', 'reembolsos', 'webhooks', 'processor-webhooks'],
  ops: ['config', 'bootstrap', 'database', 'auth', 'scheduling', 'idempotency', 'pagos', 'reembolsos', 'eventos', 'webhooks'],
};

/** The one file of src/ that may import the top-level processor/ (the local Stripe-compatible processor): the rest know it as a URL. */
const PROCESSOR_IMPORTERS = ['bootstrap/processor-connection.ts'];

/** Every .ts file below `dir`, as paths relative to it. */
function sourcesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
}

interface Import {
  readonly file: string;
  readonly specifier: string;
  /** Where it points, relative to src/ (`../processor/main.js` for the processor). */
  readonly target: string;
}

/** The relative imports of every source file of src/ (packages are not modules of ours). */
function importsOfSrc(): Import[] {
  const src = srcDir();
  return sourcesBelow(src).flatMap((file) =>
    importsOf(readFileSync(join(src, file), 'utf8'))
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => ({ file, specifier, target: relative(src, resolve(src, dirname(file), specifier)) })),
  );
}

/** The folder of src/ a path relative to src/ lies in; undefined for the files at src/'s top and for paths outside src/. */
function folderOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : undefined;
}

/** Every module specifier of `import … from '…'`, `export … from '…'` and `import('…')` in a source text. */
function importsOf(source: string): string[] {
  const patterns = [/\bfrom\s+['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /^\s*import\s+['"]([^'"]+)['"]/gm];
  return patterns.flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[1]!));
}

const FEATURE_WORDS = /\b(pagos?|reembolsos?|refunds?|charges?)\b/i;

describe('importsOf (the parser this guard relies on)', () => {
  it('finds static, re-exported, side-effect and dynamic imports', () => {
    const source = `import { a } from '../x/a.js';\nexport { b } from "./b.js";\nimport './c.js';\nconst d = await import('../d.js');`;
    expect(importsOf(source).sort()).toEqual(['../d.js', '../x/a.js', './b.js', './c.js']);
  });
});

describe('src/idempotency/ knows no feature', () => {
  const folder = (): string => join(srcDir(), 'idempotency');
  const files = (): string[] => readdirSync(folder()).filter((file) => file.endsWith('.ts'));

  it('has sources to check', () => {
    expect(files().length).toBeGreaterThan(10);
  });

  it.each(['pagos', 'reembolsos', 'gateway', 'auth'])('imports nothing from src/%s/', (feature) => {
    for (const file of files()) {
      const offending = importsOf(readFileSync(join(folder(), file), 'utf8')).filter((specifier) => specifier.split('/').includes(feature));
      expect({ file, offending }).toEqual({ file, offending: [] });
    }
  });

  it('names no payment, refund or charge in its code (comments may explain what a caller does)', () => {
    for (const file of files()) {
      const code = readFileSync(join(folder(), file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
      expect({ file, mentions: code.match(FEATURE_WORDS)?.[0] }).toEqual({ file, mentions: undefined });
    }
  });
});

describe('the folders of src/ import only the floors written down for them', () => {
  it('every folder of src/ is written down', () => {
    const folders = readdirSync(srcDir(), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.sort()).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it('the written-down directions only point down: no folder can reach itself through them', () => {
    const reaches = (from: string, seen = new Set<string>()): Set<string> => {
      for (const next of MAY_IMPORT[from] ?? []) if (!seen.has(next)) reaches(next, seen.add(next));
      return seen;
    };
    for (const folder of Object.keys(MAY_IMPORT)) expect({ folder, reachesItself: reaches(folder).has(folder) }).toEqual({ folder, reachesItself: false });
  });

  it('has imports between folders to check', () => {
    expect(importsOfSrc().filter(({ file, target }) => folderOf(file) !== folderOf(target)).length).toBeGreaterThan(50);
  });

  it.each(Object.keys(MAY_IMPORT))('%s/ imports only what is written down for it', (folder) => {
    const offending = importsOfSrc()
      .filter(({ file, target }) => folderOf(file) === folder && folderOf(target) !== folder)
      .filter(({ target }) => !target.startsWith('..') && !MAY_IMPORT[folder]!.includes(folderOf(target) ?? target))
      .map(({ file, specifier }) => `${file}: ${specifier}`);
    expect(offending).toEqual([]);
  });

  it('no module imports the files that compose the app (src/ top: main.ts, app.ts, app.module.ts)', () => {
    const offending = importsOfSrc()
      .filter(({ file, target }) => folderOf(file) !== undefined && !target.startsWith('..') && folderOf(target) === undefined)
      .map(({ file, specifier }) => `${file}: ${specifier}`);
    expect(offending).toEqual([]);
  });

  it('only src/bootstrap/processor-connection.ts imports the top-level processor/; the service knows the processor as a URL', () => {
    const offending = importsOfSrc()
      .filter(({ target }) => target === '../processor' || target.startsWith('../processor/'))
      .filter(({ file }) => !PROCESSOR_IMPORTERS.includes(file))
      .map(({ file, specifier }) => `${file}: ${specifier}`);
    expect(offending).toEqual([]);
  });
});

describe('the guard itself', () => {
  it('places a path in its folder of src/, or none for src/\'s top and outside it', () => {
    expect([folderOf('pagos/dto/crear-pago.dto.ts'), folderOf('app.module.ts'), folderOf('../processor/main.js'), folderOf('../migrations/index.js')]).toEqual([
      'pagos', undefined, undefined, undefined,
    ]);
  });
});
