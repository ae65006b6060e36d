/** Prints `name  value` lines with the values aligned. */
export function printFields(fields: ReadonlyArray<readonly [string, string]>): void {
  const width = Math.max(...fields.map(([name]) => name.length));
  for (const [name, value] of fields) console.log(`${name.padEnd(width)}  ${value}`);
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
