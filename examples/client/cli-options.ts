import { parseArgs } from 'node:util';
import type { PagoRequest } from './pagos-client.js';

export type CliCommand = { readonly name: 'pay'; readonly pago: PagoRequest } | { readonly name: 'resume' } | { readonly name: 'pending' };

export interface CliOptions {
  readonly command: CliCommand;
  readonly baseUrl: string;
  readonly apiToken: string;
  readonly storeFile: string;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
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
  --max-attempts N    default 6`;

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
} as const;

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
    },
  });
  return {
    command: parseCommand(positionals, values),
    baseUrl: values['base-url'] ?? env.PAGOS_BASE_URL ?? DEFAULTS.baseUrl,
    apiToken: values['api-token'] ?? env.PAGOS_API_TOKEN ?? DEFAULTS.apiToken,
    storeFile: values.store ?? env.PAGOS_CLIENT_STORE ?? DEFAULTS.storeFile,
    timeoutMs: positiveInteger('--timeout-ms', values['timeout-ms'], DEFAULTS.timeoutMs),
    maxAttempts: positiveInteger('--max-attempts', values['max-attempts'], DEFAULTS.maxAttempts),
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

function positiveInteger(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw new Error(`${flag} must be a positive whole number, got ${value}`);
  return number;
}
