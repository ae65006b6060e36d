/** The promise's value, or a rejection naming the hang once `ms` passed. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls every 5 ms, at most `polls` times: a wait for a state, never for a timeout to pass. */
export async function waitUntil(condition: () => Promise<boolean>, polls = 1000): Promise<void> {
  for (let i = 0; i < polls; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('condition never became true');
}

/**
 * Polls every 50 ms until `condition` holds, failing after `seconds` with what it waited for: for
 * states that take a webhook's retry or a reconcile pass, which on a loaded machine can take far
 * longer than a state change in one process.
 */
export async function eventually(what: string, condition: () => Promise<boolean>, seconds = 40): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${seconds} s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Polls `probe` every `pollMs` until it gives a value (neither undefined nor false), and resolves
 * with it; fails after `timeoutMs` naming what it waited for.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, pollMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
