import type { Transactions } from '../../src/database/transactions.js';

/** Runs `work` as a request's code runs: inside the scope that the app's middleware opens per request. */
export function inRequestScope<T>(transactions: Transactions, work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => transactions.requestScope(undefined, undefined, () => void work().then(resolve, reject)));
}
