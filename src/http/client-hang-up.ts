import type { FastifyReply } from 'fastify';

/**
 * Runs `work` with a signal that aborts if the client hangs up first (the response closes before it
 * is sent): a request that only waits can stop waiting for nobody.
 */
export async function untilClientHangsUp<T>(reply: FastifyReply, work: (hungUp: AbortSignal) => Promise<T>): Promise<T> {
  const hungUp = new AbortController();
  const abort = (): void => hungUp.abort();
  reply.raw.once('close', abort);
  try {
    return await work(hungUp.signal);
  } finally {
    reply.raw.off('close', abort);
  }
}
