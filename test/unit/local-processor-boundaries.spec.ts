import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

/**
 * The local processor stands apart from the service: processor/ imports nothing from src/ and no
 * Nest package, and src/ reaches it only through its start function. Reads sources as text.
 */
function repoRoot(): string {
  const specPath = expect.getState().testPath;
  if (specPath === undefined) throw new Error('Jest did not report the path of this spec');
  return join(dirname(specPath), '..', '..');
}

function sourcesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(folder, file));
}

function importsOf(source: string): string[] {
  const patterns = [/\bfrom\s+['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /^\s*import\s+['"]([^'"]+)['"]/gm];
  return patterns.flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[1]!));
}

describe('processor/ boundaries', () => {
  it('processor/ imports nothing from src/ and no Nest package', () => {
    const files = sourcesUnder(join(repoRoot(), 'processor'));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const offending = importsOf(readFileSync(file, 'utf8')).filter(
        (specifier) => specifier.startsWith('@nestjs/') || (specifier.startsWith('.') && !resolve(dirname(file), specifier).startsWith(join(repoRoot(), 'processor'))),
      );
      expect({ file: relative(repoRoot(), file), offending }).toEqual({ file: relative(repoRoot(), file), offending: [] });
    }
  });

  it('src/ imports from processor/ only its start function module', () => {
    for (const file of sourcesUnder(join(repoRoot(), 'src'))) {
      const offending = importsOf(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => relative(repoRoot(), resolve(dirname(file), specifier)))
        .filter((target) => target.startsWith('processor/') && target !== 'processor/local-processor.js');
      expect({ file: relative(repoRoot(), file), offending }).toEqual({ file: relative(repoRoot(), file), offending: [] });
    }
  });
});
