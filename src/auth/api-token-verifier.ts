import { hash, timingSafeEqual } from 'node:crypto';
import type { ApiClient } from '../config/app-config.js';

/**
 * Maps a bearer token to its client in constant time: tokens are compared as SHA-256 digests (equal
 * length) and every configured token is compared, so timing reveals neither a prefix nor a position.
 */
export class ApiTokenVerifier {
  private readonly clients: readonly { clientId: string; digest: Buffer }[];

  constructor(clients: readonly ApiClient[]) {
    this.clients = clients.map(({ clientId, token }) => ({ clientId, digest: digestOf(token) }));
  }

  clientIdFor(token: string): string | undefined {
    const presented = digestOf(token);
    let match: string | undefined;
    for (const client of this.clients) {
      if (timingSafeEqual(presented, client.digest)) match = client.clientId;
    }
    return match;
  }
}

function digestOf(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}
