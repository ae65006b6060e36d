import { checkHistory, INVARIANTS, operationsOf } from './checker.js';
import type { HistoryRecord } from './history.js';

/** Prints the checker's verdict: counts per invariant, answers and faults, then each violation with its operations. Returns whether it failed. */
export function printVerdict(history: readonly HistoryRecord[]): boolean {
  const verdict = checkHistory(history);
  console.log(`operations: ${verdict.operations}`);
  console.log(`answers by status: ${format(verdict.answersByStatus)}`);
  console.log(`faults by kind: ${format(verdict.faultsByKind)}`);
  for (const invariant of INVARIANTS) {
    const violations = verdict.violations.filter((violation) => violation.invariant === invariant).length;
    console.log(`${violations === 0 ? 'ok  ' : 'FAIL'} ${invariant}: ${verdict.checked[invariant]} checked, ${violations} violations`);
  }
  for (const violation of verdict.violations) {
    console.log(`\nviolation of ${violation.invariant}: ${violation.message}`);
    for (const record of operationsOf(history, violation.keys)) console.log(`  ${JSON.stringify(record)}`);
  }
  return verdict.violations.length > 0;
}

function format(counts: Record<string, number>): string {
  return Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([name, n]) => `${name}=${n}`).join(' ') || 'none';
}
