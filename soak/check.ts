import { readFileSync } from 'node:fs';
import type { HistoryRecord } from './history.js';
import { printVerdict } from './report.js';

/**
 * `npm run soak:check -- <history.jsonl>`: the checker alone, on a history a run wrote (a failed
 * run's, to read again; or a hand-edited one). Exits 1 on any violation.
 */
const file = process.argv[2];
if (!file) {
  console.error('usage: npm run soak:check -- <history.jsonl>');
  process.exit(2);
}
const history = readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as HistoryRecord);
process.exit(printVerdict(history) ? 1 : 0);
