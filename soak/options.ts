import { Command, InvalidArgumentError } from 'commander';

export interface SoakOptions {
  readonly durationMs: number;
  readonly seed: number;
  readonly clients: number;
  /** API clients (merchants) the apps are spread over, each with its own token and webhook endpoint. */
  readonly merchants: number;
  readonly databaseUrl: string;
  readonly history: string;
  /** How long after the last operation and fault the final state is read: the reconciler's bound. */
  readonly quietMs: number;
}

/** `10m`, `2m`, `90s`, `4h` → milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)(s|m|h)$/.exec(text.trim());
  if (!match) throw new InvalidArgumentError(`expected a number and s, m or h, e.g. 2m; got ${text}`);
  return Number(match[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[match[2] as 's' | 'm' | 'h'];
}

function parseWhole(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`expected a whole number; got ${text}`);
  return Number(text);
}

export function parseSoakOptions(argv: readonly string[]): SoakOptions {
  const program = new Command('npm run soak --')
    .description('Drives two replicas, the processor and a webhook consumer through seeded faults, records the history and checks it')
    .option('--duration <time>', 'how long clients run (s, m or h)', parseDuration, 600_000)
    .option('--seed <n>', 'the seed of every random choice (default: random, printed)', parseWhole)
    .option('--clients <n>', 'concurrent simulated clients', parseWhole, 32)
    .option('--merchants <n>', 'API clients the apps are spread over, each with its own webhook endpoint', parseWhole, 4)
    .option('--database-url <url>', 'a PostgreSQL server; the run creates a fresh database on it', 'postgres://postgres@127.0.0.1:5432/postgres')
    .option('--history <file>', 'where the history is written (JSONL)')
    .option('--quiet <time>', 'quiet period before the final state is read', parseDuration, 45_000)
    .parse(argv, { from: 'user' });
  const options = program.opts<{ duration: number; seed?: number; clients: number; merchants: number; databaseUrl: string; history?: string; quiet: number }>();
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  return {
    durationMs: options.duration,
    seed,
    clients: options.clients,
    merchants: Math.max(1, Math.min(options.merchants, options.clients)),
    databaseUrl: options.databaseUrl,
    history: options.history ?? `test-results/soak/history-${seed}.jsonl`,
    quietMs: options.quiet,
  };
}
