import type { IncomingMessage } from 'node:http';

/**
 * Every line of the header `name` (lower case) as sent, apart: `headers` joins repeated lines with
 * ", ". Reads `rawHeaders` for this one name instead of `headersDistinct`, which builds every header.
 */
export function headerLines(request: IncomingMessage, name: string): string[] {
  const lines: string[] = [];
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) lines.push(raw[i + 1]!);
  }
  return lines;
}
