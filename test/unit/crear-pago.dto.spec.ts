import { describe, expect, it } from '@jest/globals';
import { CrearPagoDto } from '../../src/pagos/dto/crear-pago.dto.js';

/** The body schema of POST /pagos on its own: one defect of a field is one error, never the same told twice. */
describe('CrearPagoDto', () => {
  const valid = { numeroOrden: 'ORD-1001', monto: 1999, moneda: 'EUR', token: 'tok_visa' };
  const issuesFor = (body: Record<string, unknown>): string[] => {
    const result = CrearPagoDto.safeParse(body);
    return result.success ? [] : result.error.issues.map((issue) => issue.message);
  };

  it('accepts a valid body', () => {
    expect(issuesFor(valid)).toEqual([]);
  });

  it.each([
    ['moneda', 'EURO'],
    ['moneda', 'E1'],
    ['moneda', ''],
    ['moneda', 'eur'],
    ['moneda', 'XYZ'],
    ['moneda', 5],
    ['token', ''],
    ['token', 'tok visa'],
    ['token', 'x'.repeat(300)],
    ['numeroOrden', ''],
    ['numeroOrden', 'ORD 1'],
    ['monto', 0],
    ['monto', 19.99],
  ])('%s=%j is one error, naming it', (field, value) => {
    const issues = issuesFor({ ...valid, [field]: value });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(new RegExp(`^${field} `));
  });
});
