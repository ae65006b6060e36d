import { afterEach } from '@jest/globals';
import { takeViolations } from './contract.js';

// Run after every end-to-end test (jest.config.cjs): an answer that drifted from the OpenAPI document
// fails the test even when the test caught the helper's error (a retry loop, a `.catch`).
afterEach(() => {
  const found = takeViolations();
  if (found.length > 0) throw new Error(`answers that break the OpenAPI document:\n${found.join('\n')}`);
});
