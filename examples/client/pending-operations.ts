import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { PagoRequest } from './pagos-client.js';

/** A payment the user asked for whose final answer has not arrived yet. */
export interface PendingOperation {
  readonly idempotencyKey: string;
  readonly pago: PagoRequest;
  readonly createdAt: string;
}

type PendingByOrder = Record<string, PendingOperation>;

// Read and write for the owner only: the file holds each payment's card token.
const OWNER_ONLY = 0o600;

/**
 * Pending payments in a JSON file, one per order, written before their first attempt: an app that
 * dies mid-payment and is opened again finds the operation and retries it with the same key.
 * Each write goes to a temporary file, is flushed to disk and renamed over the old one, so a crash
 * leaves the old file or the new one, never half of either. The file holds the card token, so only
 * its owner may read it (0600), whatever mode an older file had; an app keeps it in the platform's
 * secure storage instead (Keychain, Android Keystore-encrypted storage).
 */
export class PendingOperationsFile {
  constructor(readonly file: string) {}

  find(numeroOrden: string): PendingOperation | undefined {
    return this.read()[numeroOrden];
  }

  list(): PendingOperation[] {
    return Object.values(this.read());
  }

  remember(operation: PendingOperation): void {
    this.write({ ...this.read(), [operation.pago.numeroOrden]: operation });
  }

  forget(numeroOrden: string): void {
    const { [numeroOrden]: _forgotten, ...rest } = this.read();
    this.write(rest);
  }

  private read(): PendingByOrder {
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as PendingByOrder;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
  }

  private write(pending: PendingByOrder): void {
    mkdirSync(path.dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    const fd = openSync(temporary, 'w', OWNER_ONLY);
    try {
      // The mode given to open applies only to a new file (and under the umask): a leftover temporary keeps its own.
      fchmodSync(fd, OWNER_ONLY);
      writeSync(fd, `${JSON.stringify(pending, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.file);
  }
}
