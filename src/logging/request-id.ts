import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'X-Request-Id';

// Ids from a caller's tracing (UUIDs, W3C trace ids, ULIDs) fit; anything else could forge log content.
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `X-Request-Id` when it is a sane token, else a new UUID; the response echoes it. */
export function requestIdOf(sent: string | string[] | undefined): string {
  return typeof sent === 'string' && ACCEPTED_REQUEST_ID.test(sent) ? sent : randomUUID();
}
