/** Prints `name  value` lines with the values aligned (and made printable). */
export function printFields(fields: ReadonlyArray<readonly [string, string]>): void {
  const width = Math.max(...fields.map(([name]) => name.length));
  for (const [name, value] of fields) console.log(`${name.padEnd(width)}  ${printable(value)}`);
}

// What a terminal or a log would act on rather than show: controls (CR, LF, ESC …), lone
// surrogates, line separators, bidirectional overrides.
const UNPRINTABLE = /[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * Text stored from a client (a webhook URL, a consumer's error, a stored body) made safe to print
 * on one line: `\xNN` for a character up to U+00FF, `\uNNNN` above.
 *
 * @example printable('https://a.example/\r\n\u001b[2J') === 'https://a.example/\\x0d\\x0a\\x1b[2J'
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (character) => {
    const code = character.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

export function seconds(value: number): string {
  return `${value.toFixed(1)} s`;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** `90`, `90s`, `15m`, `2h` → seconds; anything else is an operator error. */
export function parseDuration(value: string): number | undefined {
  const match = /^(\d{1,7})([smh]?)$/.exec(value.trim());
  return match ? Number(match[1]) * UNIT_SECONDS[match[2] || 's']! : undefined;
}
