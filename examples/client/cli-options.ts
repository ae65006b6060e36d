import { parseArgs } from 'node:util';
import type { ChallengeOutcome } from './authentication.js';
import type { PagoRequest } from './pagos-client.js';

export type CliCommand = { readonly name: 'pay'; readonly pago: PagoRequest } | { readonly name: 'resume' } | { readonly name: 'pending' };

export interface CliOptions {
  readonly command: CliCommand;
  readonly baseUrl: string;
  readonly apiToken: string;
  readonly storeFile: string;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  /** Play the customer's 3-D Secure challenge at the local processor with this outcome; undefined: hand it off. */
  readonly authenticate: ChallengeOutcome | undefined;
  readonly processorUrl: string;
  /** How long to wait for a payment's outcome after a 202; 0: not at all. */
  readonly outcomeWaitSeconds: number;
}

export const USAGE = `usage: npm run client -- <command> [options]
  pay --orden ORD-1 --monto 1999 --moneda EUR --token tok_visa   pay an order (resumes its pending key if any)
  resume                                                          retry every pending payment with its key
  pending                                                         list pending payments
options (environment variable in brackets):
  --base-url URL      [PAGOS_BASE_URL]     default http://localhost:3000
  --api-token TOKEN   [PAGOS_API_TOKEN]    default the demo token of npm start
  --store FILE        [PAGOS_CLIENT_STORE] default .data/client-pending.json
  --timeout-ms N      per attempt, default 15000 (the server may hold one for 10 s: Prefer: wait=10)
  --max-attempts N    default 6
3-D Secure (a 202: the payment waits for the customer's authentication):
  --autenticar ok|falla                            play the customer's challenge at the local processor
  --procesador URL    [PAGOS_PROCESADOR_URL]       default http://127.0.0.1:12111 (npm start's local processor)
  --esperar-s N       wait up to N s for the outcome, default 60 (0: don't)`;

// The defaults match `npm start`: its port, its demo token (API_TOKENS' default), its gitignored .data/.
const DEFAULTS = {
  baseUrl: 'http://localhost:3000',
  apiToken: 'demo-token-change-me-0001',
  storeFile: '.data/client-pending.json',
  // A mobile request that takes longer is better retried than waited for; 15 s leaves room for the
  // 10 s the service may hold a duplicate (Prefer: wait=10) to answer it with the first result.
  timeoutMs: 15_000,
  // Jittered backoff capped at 1, 2, 4, 8, 16 s: under a minute in all, far inside the service's 24 h key TTL.
  maxAttempts: 6,
  // Where npm start's embedded local processor listens (LOCAL_PROCESSOR_PORT's default).
  processorUrl: 'http://127.0.0.1:12111',
  // A customer authenticating on another device takes a minute at most while the user watches the
  // screen; the service itself waits AUTENTICACION_TIMEOUT_SECONDS (15 min) before giving up.
  outcomeWaitSeconds: 60,
} as const;

const CHALLENGE_OUTCOMES: readonly ChallengeOutcome[] = ['ok', 'falla'];

/** The command line and environment of the example client; throws with a message naming the bad flag. */
export function parseCliOptions(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      orden: { type: 'string' },
      monto: { type: 'string' },
      moneda: { type: 'string' },
      token: { type: 'string' },
      'base-url': { type: 'string' },
      'api-token': { type: 'string' },
      store: { type: 'string' },
      'timeout-ms': { type: 'string' },
      'max-attempts': { type: 'string' },
      autenticar: { type: 'string' },
      procesador: { type: 'string' },
      'esperar-s': { type: 'string' },
    },
  });
  return {
    command: parseCommand(positionals, values),
    baseUrl: values['base-url'] ?? env.PAGOS_BASE_URL ?? DEFAULTS.baseUrl,
    apiToken: values['api-token'] ?? env.PAGOS_API_TOKEN ?? DEFAULTS.apiToken,
    storeFile: values.store ?? env.PAGOS_CLIENT_STORE ?? DEFAULTS.storeFile,
    timeoutMs: positiveInteger('--timeout-ms', values['timeout-ms'], DEFAULTS.timeoutMs),
    maxAttempts: positiveInteger('--max-attempts', values['max-attempts'], DEFAULTS.maxAttempts),
    authenticate: challengeOutcome(values.autenticar),
    processorUrl: values.procesador ?? env.PAGOS_PROCESADOR_URL ?? DEFAULTS.processorUrl,
    outcomeWaitSeconds: wholeNumber('--esperar-s', values['esperar-s'], DEFAULTS.outcomeWaitSeconds, 0),
  };
}

function parseCommand(positionals: string[], values: Record<string, string | undefined>): CliCommand {
  const [name, ...extra] = positionals;
  if (extra.length > 0) throw new Error(`unexpected argument: ${extra[0]}`);
  if (name === 'resume' || name === 'pending') return { name };
  if (name !== 'pay') throw new Error(name === undefined ? 'missing command' : `unknown command: ${name}`);
  const required = (flag: string): string => {
    const value = values[flag];
    if (value === undefined) throw new Error(`pay needs --${flag}`);
    return value;
  };
  // The amount is sent as given (integer cents); the service, not the example, validates the rest.
  const monto = Number(required('monto'));
  if (!Number.isSafeInteger(monto)) throw new Error(`--monto must be a whole number of cents, got ${values.monto}`);
  return { name: 'pay', pago: { numeroOrden: required('orden'), monto, moneda: required('moneda'), token: required('token') } };
}

function challengeOutcome(value: string | undefined): ChallengeOutcome | undefined {
  if (value === undefined) return undefined;
  if (!CHALLENGE_OUTCOMES.includes(value as ChallengeOutcome)) throw new Error(`--autenticar must be ok or falla, got ${value}`);
  return value as ChallengeOutcome;
}

function positiveInteger(flag: string, value: string | undefined, fallback: number): number {
  return wholeNumber(flag, value, fallback, 1);
}

function wholeNumber(flag: string, value: string | undefined, fallback: number, minimum: 0 | 1): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < minimum) {
    throw new Error(`${flag} must be a ${minimum === 1 ? 'positive' : 'non-negative'} whole number, got ${value}`);
  }
  return number;
}
