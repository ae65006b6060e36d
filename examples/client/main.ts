import { STATUS_CODES } from 'node:http';
import { parseCliOptions, USAGE, type CliOptions } from './cli-options.js';
import { PagosClient, type PagosAnswer } from './pagos-client.js';
import { pay, resumePending, type PayDependencies, type PayOutcome } from './pay.js';
import { PendingOperationsFile } from './pending-operations.js';
import type { AttemptReport } from './send-with-retries.js';

// Doubling from 1 s capped at 16 s: a user still watching the screen, a service given time to recover.
const BACKOFF = { baseDelayMs: 1_000, maxDelayMs: 16_000 } as const;

// 0: paid (2xx) or nothing to do; 1: a final refusal (4xx, a decline) — retrying would not change it; 2: no final answer, the key stays pending.
const EXIT = { ok: 0, refused: 1, pending: 2, usage: 64 } as const;

async function main(): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCliOptions(process.argv.slice(2), process.env);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return EXIT.usage;
  }
  const pending = new PendingOperationsFile(options.storeFile);
  const dependencies: PayDependencies = {
    client: new PagosClient({ baseUrl: options.baseUrl, apiToken: options.apiToken, timeoutMs: options.timeoutMs }),
    pending,
    policy: { maxAttempts: options.maxAttempts, ...BACKOFF, random: Math.random },
    onAttempt: printAttempt,
  };
  switch (options.command.name) {
    case 'pending': {
      const operations = pending.list();
      if (operations.length === 0) console.log(`nothing pending in ${options.storeFile}`);
      for (const operation of operations) console.log(`${operation.pago.numeroOrden}  key ${operation.idempotencyKey}  since ${operation.createdAt}`);
      return EXIT.ok;
    }
    case 'resume': {
      const outcomes = await resumePending(dependencies);
      if (outcomes.length === 0) console.log(`nothing pending in ${options.storeFile}`);
      return Math.max(EXIT.ok, ...outcomes.map((outcome) => report(outcome, options.storeFile)));
    }
    case 'pay': {
      const { pago } = options.command;
      const existing = pending.find(pago.numeroOrden);
      console.log(existing ? `resuming ${pago.numeroOrden} with its pending key ${existing.idempotencyKey}` : `paying ${pago.numeroOrden}`);
      return report(await pay(pago, dependencies), options.storeFile);
    }
  }
}

function printAttempt({ attempt, answer, error, decision }: AttemptReport<PagosAnswer>): void {
  const got = answer ? describe(answer) : `no answer (${error?.message})`;
  const next = decision.retry
    ? `retrying in ${decision.delayMs} ms${decision.retryAfterMs === undefined ? '' : ` (Retry-After ${decision.retryAfterMs} ms)`}`
    : decision.reason;
  console.log(`attempt ${attempt}: ${got} -> ${next}`);
}

function report(outcome: PayOutcome, storeFile: string): number {
  if (!outcome.final) {
    console.log(`no final answer after ${outcome.attempts} attempt(s); key ${outcome.idempotencyKey} kept in ${storeFile}: run \`npm run client -- resume\``);
    return EXIT.pending;
  }
  const answer = outcome.result!;
  console.log(`final answer: ${describe(answer)}\n${answer.text}\nkey ${outcome.idempotencyKey} forgotten`);
  return answer.status < 300 ? EXIT.ok : EXIT.refused;
}

function describe(answer: PagosAnswer): string {
  const replayed = answer.headers.get('idempotent-replayed') === 'true' ? ', Idempotent-Replayed: true' : '';
  const type = answer.status >= 400 ? ` ${(answer.json as { type?: string } | undefined)?.type ?? ''}` : '';
  return `${answer.status} ${STATUS_CODES[answer.status] ?? ''}${type}${replayed}`;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error((error as Error).message);
    process.exitCode = EXIT.pending;
  },
);
