import { setTimeout as sleep } from 'node:timers/promises';

// A run stops after this many batches and leaves the rest to the next tick, so it never runs for long.
const MAX_BATCHES_PER_RUN = 1000;

/**
 * One purge run: `deleteBatch` (one bounded DELETE, returning how many rows it deleted) until a
 * batch comes back short of `batchSize`. After each batch it rests as long as the batch took, so a
 * large backlog uses at most half of one connection and of the database's time for it, and live
 * traffic keeps the rest. Returns the rows deleted.
 */
export async function purgeInBatches(deleteBatch: () => Promise<number>, batchSize: number): Promise<number> {
  let purged = 0;
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
    const started = performance.now();
    const deleted = await deleteBatch();
    purged += deleted;
    if (deleted < batchSize) break;
    await sleep(performance.now() - started);
  }
  return purged;
}
