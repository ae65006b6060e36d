import { STATUS_CODES } from 'node:http';
import { completeChallenge, handOffText, waitForOutcome } from './authentication.js';
import { type Authentication, authenticationOf } from './authentication-policy.js';
import { parseCliOptions, USAGE, type CliOptions } from './cli-options.js';
import { PagosClient, type PagosAnswer } from './pagos-client.js';
import { pay, resumePending, type PayDependencies, type PayOutcome } from './pay.js';
import { PendingOperationsFile } from './pending-operations.js';
import type { AttemptReport } from './send-with-retries.js';

// Doubling from 1 s capped at 16 s: a user still watching the screen, a service given time to recover.
const BACKOFF = { baseDelayMs: 1_000, maxDelayMs: 16_000 } as const;

// 0: paid (2xx, or a 202 whose customer authenticated) or nothing to do; 1: a final refusal (4xx, a decline,
// a failed authentication) — retrying would not change it; 2: no final answer, the key stays pending;
// 3: the key's answer was a 202 and the payment still waits for its customer (3-D Secure) when the client stops waiting.
const EXIT = { ok: 0, refused: 1, pending: 2, awaitingAuthentication: 3, usage: 64 } as const;

async function main(): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCliOptions(process.argv.slice(2), process.env);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return EXIT.usage;
  }
  const pending = new PendingOperationsFile(options.storeFile);
  const client = new PagosClient({ baseUrl: options.baseUrl, apiToken: options.apiToken, timeoutMs: options.timeoutMs });
  const dependencies: PayDependencies = {
    client,
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
      const codes: number[] = [];
      for (const outcome of outcomes) codes.push(await report(outcome, options, client));
      return Math.max(EXIT.ok, ...codes);
    }
    case 'pay': {
      const { pago } = options.command;
      const existing = pending.find(pago.numeroOrden);
      console.log(existing ? `resuming ${pago.numeroOrden} with its pending key ${existing.idempotencyKey}` : `paying ${pago.numeroOrden}`);
      return report(await pay(pago, dependencies), options, client);
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

async function report(outcome: PayOutcome, options: CliOptions, client: PagosClient): Promise<number> {
  if (!outcome.final) {
    console.log(`no final answer after ${outcome.attempts} attempt(s); key ${outcome.idempotencyKey} kept in ${options.storeFile}: run \`npm run client -- resume\``);
    return EXIT.pending;
  }
  const answer = outcome.result!;
  // A 202 is the key's final answer too: what happens next is the payment's, read with GET /pagos/{id}.
  console.log(`final answer: ${describe(answer)}\n${answer.text}\nkey ${outcome.idempotencyKey} forgotten`);
  const authentication = authenticationOf(answer);
  if (authentication) return followAuthentication(authentication, options, client);
  return answer.status < 300 ? EXIT.ok : EXIT.refused;
}

/** The 202's hand-off; with --autenticar, the customer's challenge at the local processor; then the wait for the outcome. */
async function followAuthentication(authentication: Authentication, options: CliOptions, client: PagosClient): Promise<number> {
  console.log(handOffText(authentication));
  const { pagoId, intentId } = authentication;
  if (options.authenticate) {
    console.log(`playing the customer's challenge at the local processor (--autenticar ${options.authenticate}): intent ${intentId}`);
    try {
      await completeChallenge(options.processorUrl, intentId, options.authenticate);
    } catch (error) {
      console.log(`the challenge could not be played at ${options.processorUrl} (${(error as Error).message}); payment ${pagoId} still waits for its customer`);
      return EXIT.awaitingAuthentication;
    }
  }
  if (options.outcomeWaitSeconds === 0) {
    console.log(`not waiting (--esperar-s 0): read the outcome with GET /pagos/${pagoId}`);
    return EXIT.awaitingAuthentication;
  }
  console.log(`waiting up to ${options.outcomeWaitSeconds} s for the outcome: GET /pagos/${pagoId} with Prefer: wait`);
  const { reading, reason, answer } = await waitForOutcome(client, pagoId, options.outcomeWaitSeconds * 1000);
  if (reason === 'decided' && reading.kind === 'estado') {
    console.log(`payment ${pagoId}: ${reading.estado}${reading.motivo ? ` (motivo ${reading.motivo})` : ''}\n${answer!.text}`);
    return reading.estado === 'APROBADO' ? EXIT.ok : EXIT.refused;
  }
  const state = reading.kind === 'estado' ? `still ${reading.estado}` : reading.kind === 'refused' ? `unread (GET answered ${reading.status})` : 'unread (no answer)';
  console.log(`payment ${pagoId} ${state} after ${options.outcomeWaitSeconds} s; it waits for its customer until ${authentication.expiraEn}: read it later with GET /pagos/${pagoId}`);
  return EXIT.awaitingAuthentication;
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
