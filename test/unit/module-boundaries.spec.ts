import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

/**
 * "idempotency/ imports nothing from pagos/, gateway/, auth/" — and nothing from reembolsos/: the
 * second idempotent route must not have taught the mechanism anything about refunds. Reads the
 * sources as text (nothing runs).
 */
function srcDir(): string {
  const specPath = expect.getState().testPath;
  if (specPath === undefined) throw new Error('Jest did not report the path of this spec');
  return join(dirname(specPath), '..', '..', 'src');
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
