import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { KEY_STATUSES } from '../../src/idempotency/idempotency-key-record.entity.js';
import { ESTADOS_PAGO, MOTIVOS_RECHAZO } from '../../src/pagos/pago.entity.js';
import { ESTADOS_REEMBOLSO } from '../../src/reembolsos/reembolso.entity.js';

/**
 * "Closed sets live in one place: statuses as a TS union mirrored by a SQL CHECK." Reads the
 * migrations as text (nothing runs) and compares the CHECK's IN (...) list with the TS constant:
 * the `up()` of the newest migration that (re)defines it (its `down()` restores the older list).
 */
// Located from this spec's own path (tsc builds test/ as CommonJS, so no import.meta here).
function migrationText(file: string): string {
  const specPath = expect.getState().testPath;
  if (specPath === undefined) throw new Error('Jest did not report the path of this spec');
  const text = readFileSync(join(dirname(specPath), '..', '..', 'migrations', file), 'utf8');
  return text.split(/async down\(/)[0]!;
}

/** The quoted literals of every `CHECK (<column> IN ('a', 'b', ...))` on that column. */
function checkedValues(sql: string, column: string): string[][] {
  const check = new RegExp(`CHECK\\s*\\(\\s*${column}\\s+IN\\s*\\(([^)]*)\\)\\s*\\)`, 'gi');
  return [...sql.matchAll(check)].map((match) => {
    const list = match[1]!;
    const literals = [...list.matchAll(/'((?:[^']|'')*)'/g)].map((literal) => literal[1]!.replaceAll("''", "'"));
    // Nothing but quoted literals and commas may sit in the list, or the parse missed a value.
    const rest = list.replace(/'(?:[^']|'')*'/g, '').replace(/[\s,]/g, '');
    if (rest !== '') throw new Error(`unexpected text in the IN list of ${column}: ${rest}`);
    return literals;
  });
}

describe('checkedValues (the parser this guard relies on)', () => {
  it('reads the literals of a CHECK IN list and ignores an IN of a partial index', () => {
    const sql = `estado text CHECK (estado IN ('A', 'B''s',  'C')), WHERE estado IN ('A')`;
    expect(checkedValues(sql, 'estado')).toEqual([['A', "B's", 'C']]);
  });

  it('finds nothing when the column has no CHECK IN', () => {
    expect(checkedValues(`status text NOT NULL`, 'status')).toEqual([]);
  });

  it('refuses an IN list holding anything but string literals', () => {
    expect(() => checkedValues(`CHECK (status IN ('a', upper('b')))`, 'status')).toThrow('unexpected text');
  });
});

describe.each([
  ['idempotency_keys.status', KEY_STATUSES, '1764700000000-create-idempotency-keys.ts', 'status'],
  ['pagos.estado', ESTADOS_PAGO, '1764700021000-pagos-autenticacion.ts', 'estado'],
  ['pagos.motivo', MOTIVOS_RECHAZO, '1764700021000-pagos-autenticacion.ts', 'motivo'],
  ['reembolsos.estado', ESTADOS_REEMBOLSO, '1764700004000-create-reembolsos.ts', 'estado'],
])('the closed set %s', (_name, values, migration, column) => {
  const checks = (): string[][] => checkedValues(migrationText(migration), column);

  it('has exactly one CHECK IN constraint in its migration', () => {
    expect(checks()).toHaveLength(1);
  });

  it('is the same set in TypeScript and in the SQL CHECK', () => {
    expect([...checks()[0]!].sort()).toEqual([...values].sort());
  });

  it('lists each value once on both sides', () => {
    const [sql] = checks();
    expect(new Set(values).size).toBe(values.length);
    expect(new Set(sql).size).toBe(sql!.length);
  });
});
