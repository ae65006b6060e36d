import { createServer } from 'node:net';

/**
 * Binds `port` on `host` and lets it go, before anything else starts: a port held by another process
 * (often another `npm start`) fails in a moment, before PostgreSQL and the processor are started for
 * nothing, with the same EADDRINUSE error `listen` would give. Not a guarantee (the port may be
 * taken in between): the entry point says the same for `listen`'s own error. Port 0 is always free.
 */
export async function assertPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, resolve);
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
