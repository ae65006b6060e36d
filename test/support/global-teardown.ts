import type { RunningPostgres } from '../../src/database/embedded-postgres.js';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __embeddedPostgres__?: RunningPostgres }).__embeddedPostgres__?.stop();
}
