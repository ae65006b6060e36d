import { expect } from '@jest/globals';
import type { HttpResult } from './http.js';

/**
 * The rule for concurrent duplicates of one key: exactly one executed (a 201 without
 * Idempotent-Replayed), every other answer a 409 in flight or that answer byte for byte.
 * Returns the executed answer.
 */
export function expectOneExecution(results: HttpResult[]): HttpResult {
  const executed = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
  expect(executed).toHaveLength(1);
  for (const result of results.filter((r) => r !== executed[0])) {
    if (result.status === 409) expect(result.json.type).toContain('idempotency-key-in-flight');
    else expect({ status: result.status, text: result.text }).toEqual({ status: 201, text: executed[0]!.text });
  }
  return executed[0]!;
}
