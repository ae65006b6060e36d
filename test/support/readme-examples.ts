/**
 * The README's examples as data, and the rule that compares a shown answer with a served one.
 *
 * Convention (the README says so above its examples): in a `## Section`, every ```sh block is a
 * command to run, and the fenced block right after it is what it answers — ```http (a status line,
 * some headers, a blank line, the body) for curl, ```text for anything else. Fenced blocks not
 * preceded by a ```sh block are illustrations and are not run.
 *
 * What varies from run to run is written in the README as a real value and compared by shape:
 * UUIDs, ISO timestamps and order numbers (`ORD-` + 8 hex digits, as the examples make them) match
 * any value of the same shape in the same place, whole or inside a longer string (a `detail`, a
 * `Location`); so do the processor's PaymentIntent ids and client secrets (`pi_…`, `pi_…_secret_…`,
 * letters and digits), the numbers of `X-RateLimit-Remaining`/`-Reset` and the milliseconds a client
 * line prints. Everything else must be equal: the status line, every header shown, every body
 * field shown, and no body field that is not shown.
 */

export interface Example {
  /** The ```sh block, as written. */
  readonly commands: string;
  readonly answer: { readonly language: 'http' | 'text'; readonly text: string };
}

export interface HttpAnswer {
  readonly statusLine: string;
  readonly headers: Map<string, string>;
  readonly body: string;
}

const VARYING = [
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/,
  /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/,
  /ORD-[0-9a-f]{8}/,
  // A PaymentIntent's client secret, then its id (the longer shape first): Stripe's and the local processor's alike.
  /pi_[A-Za-z0-9]{14,}_secret_[A-Za-z0-9]{10,}/,
  /pi_[A-Za-z0-9]{14,}/,
  /\d+ ms/,
];
const VARYING_ANY = new RegExp(VARYING.map((pattern) => pattern.source).join('|'), 'g');
// Counters of the rate-limit window: how many requests came before, how long the window has left.
const COUNTER_HEADERS = new Set(['x-ratelimit-remaining', 'x-ratelimit-reset']);

/** The examples of one `## heading` section, in order. */
export function examplesOf(markdown: string, heading: string): Example[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`the README has no "## ${heading}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(([, language, text]) => ({ language, text: text! }));
  const examples: Example[] = [];
  blocks.forEach((block, index) => {
    if (block.language !== 'sh') return;
    const answer = blocks[index + 1];
    if (answer?.language !== 'http' && answer?.language !== 'text') {
      throw new Error(`"## ${heading}": this sh block is not followed by an http or text block:\n${block.text}`);
    }
    examples.push({ commands: block.text, answer: { language: answer.language, text: answer.text.replace(/\n$/, '') } });
  });
  return examples;
}

/** An answer as curl -i prints it (the last one, when a block's output has several) or as the README shows it. */
export function parseHttpAnswer(output: string): HttpAnswer {
  const start = output.lastIndexOf('HTTP/1.1 ');
  if (start < 0) throw new Error(`no HTTP answer in:\n${output}`);
  const text = output.slice(start).replace(/\r\n/g, '\n');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const [statusLine, ...headerLines] = head.split('\n');
  const headers = new Map(headerLines.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as [string, string];
  }));
  return { statusLine: statusLine!.trim(), headers, body: split < 0 ? '' : text.slice(split + 2).replace(/\n$/, '') };
}

/** Every difference between the answer the README shows and the one served; none means it matches. */
export function httpDifferences(shown: HttpAnswer, served: HttpAnswer): string[] {
  const found: string[] = [];
  if (shown.statusLine !== served.statusLine) found.push(`status: shown "${shown.statusLine}", served "${served.statusLine}"`);
  for (const [name, value] of shown.headers) {
    const actual = served.headers.get(name);
    const matches = COUNTER_HEADERS.has(name) ? /^\d+$/.test(actual ?? '') : actual !== undefined && shapeOf(value).test(actual);
    if (!matches) found.push(`header ${name}: shown "${value}", served ${actual === undefined ? 'none' : `"${actual}"`}`);
  }
  return [...found, ...jsonDifferences(shown.body, served.body)];
}

/** The lines a command printed against the ones shown; an `attempt N:` line may repeat (a retry that met the same answer). */
export function textDifferences(shown: string, printed: string): string[] {
  const actual = printed.replace(/\n$/, '').split('\n');
  let next = 0;
  for (const line of shown.split('\n')) {
    const matches = (candidate: string | undefined) => candidate !== undefined && lineMatches(line, candidate);
    if (!matches(actual[next])) return [`shown "${line}", printed "${actual[next] ?? '(nothing)'}"; all printed:\n${printed}`];
    next++;
    if (line.startsWith('attempt ')) while (matches(actual[next])) next++;
  }
  return next === actual.length ? [] : [`printed more than shown: ${actual.slice(next).join('\n')}`];
}

function lineMatches(shown: string, printed: string): boolean {
  if (/^[[{]/.test(shown)) return jsonDifferences(shown, printed).length === 0;
  return shapeOf(shown.replace(/^attempt \d+:/, 'attempt 0:')).test(printed.replace(/^attempt \d+:/, 'attempt 0:'));
}

function jsonDifferences(shown: string, served: string): string[] {
  if (shown === '' && served === '') return [];
  try {
    return valueDifferences(JSON.parse(shown), JSON.parse(served), 'body');
  } catch (error) {
    return [`body: shown ${shown}, served ${served} (${(error as Error).message})`];
  }
}

function valueDifferences(shown: unknown, served: unknown, at: string): string[] {
  if (typeof shown === 'string') return typeof served === 'string' && shapeOf(shown).test(served) ? [] : [`${at}: shown ${JSON.stringify(shown)}, served ${JSON.stringify(served)}`];
  if (Array.isArray(shown)) {
    if (!Array.isArray(served) || served.length !== shown.length) return [`${at}: shown ${shown.length} items, served ${JSON.stringify(served)}`];
    return shown.flatMap((item, index) => valueDifferences(item, served[index], `${at}[${index}]`));
  }
  if (shown !== null && typeof shown === 'object') {
    if (served === null || typeof served !== 'object') return [`${at}: shown an object, served ${JSON.stringify(served)}`];
    const names = new Set([...Object.keys(shown), ...Object.keys(served)]);
    return [...names].flatMap((name) => {
      if (!(name in served)) return [`${at}.${name}: shown, not served`];
      if (!(name in shown)) return [`${at}.${name}: served (${JSON.stringify((served as any)[name])}), not shown`];
      return valueDifferences((shown as any)[name], (served as any)[name], `${at}.${name}`);
    });
  }
  return shown === served ? [] : [`${at}: shown ${JSON.stringify(shown)}, served ${JSON.stringify(served)}`];
}

/** The shown text as a pattern: literal, except that each varying value matches any value of its shape. */
function shapeOf(shown: string): RegExp {
  let pattern = '';
  let last = 0;
  for (const match of shown.matchAll(VARYING_ANY)) {
    pattern += escape(shown.slice(last, match.index)) + VARYING.find((shape) => new RegExp(`^(?:${shape.source})$`).test(match[0]))!.source;
    last = match.index! + match[0].length;
  }
  return new RegExp(`^${pattern}${escape(shown.slice(last))}$`);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
