import type { FastifyRequest } from 'fastify';
import { headerLines } from './header-lines.js';

export const PREFER_HEADER = 'Prefer';
export const PREFERENCE_APPLIED_HEADER = 'Preference-Applied';

/** The request's `wait` preference (see {@link preferredWaitSeconds}), across all its `Prefer` lines. */
export function preferredWaitOf(request: FastifyRequest): number | undefined {
  return preferredWaitSeconds(headerLines(request.raw, PREFER_HEADER.toLowerCase()));
}

/**
 * The `wait` preference of RFC 7240 `Prefer` headers, in seconds, or undefined when none applies.
 * Lenient as §2 asks: unknown preferences are ignored, so are their parameters (`; …`), and so is a
 * `wait` whose value is not a whole number of seconds. Only the first `wait` counts (§2), across all
 * `Prefer` lines. Names are case-insensitive; the value may be a quoted string.
 *
 * @example
 *   preferredWaitSeconds(['respond-async, wait=5']) // 5
 *   preferredWaitSeconds(['wait=soon'])             // undefined
 */
export function preferredWaitSeconds(lines: readonly string[] | undefined): number | undefined {
  for (const preference of (lines ?? []).flatMap(splitList)) {
    const [name, ...value] = preference.split(';', 1)[0]!.split('=');
    if (name!.trim().toLowerCase() !== 'wait') continue;
    const seconds = unquote(value.join('=').trim());
    return /^\d{1,9}$/.test(seconds) ? Number(seconds) : undefined;
  }
  return undefined;
}

// Commas separate preferences except inside a quoted string.
function splitList(line: string): string[] {
  return line.match(/(?:"(?:[^"\\]|\\.)*"|[^,"])+/g) ?? [];
}

function unquote(word: string): string {
  return word.startsWith('"') && word.endsWith('"') && word.length >= 2 ? word.slice(1, -1).replace(/\\(.)/g, '$1') : word;
}
