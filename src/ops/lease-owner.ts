import { RENEWALS_PER_LEASE } from '../idempotency/idempotency.constants.js';
import type { ClaimState } from '../idempotency/idempotency.types.js';
import { seconds } from './output.js';

/**
 * What an in-flight lease says of its owner. A live owner renews it every lock timeout /
 * RENEWALS_PER_LEASE seconds, and one renewal may be late (slow, or failed once): `live` up to two
 * intervals. Past that the owner has stopped — killed (SIGKILL, a lost host) or hung — and is `gone`,
 * though a retry may take the claim over only once the whole lock timeout has passed (`expired`,
 * PostgreSQL's verdict, as the takeover's).
 */
export type LeaseOwner = 'live' | 'gone' | 'expired';

type Lease = Pick<ClaimState, 'leaseAgeSeconds' | 'leaseExpired'>;

export function leaseOwnerOf(lease: Lease, lockTimeoutSeconds: number): LeaseOwner {
  if (lease.leaseExpired) return 'expired';
  return (lease.leaseAgeSeconds ?? 0) > 2 * renewalIntervalSeconds(lockTimeoutSeconds) ? 'gone' : 'live';
}

/** The lease's age and what it says, for `key show`. */
export function describeLease(lease: Lease, lockTimeoutSeconds: number): string {
  const ageSeconds = lease.leaseAgeSeconds ?? 0;
  const age = seconds(ageSeconds);
  switch (leaseOwnerOf(lease, lockTimeoutSeconds)) {
    case 'live':
      return `${age} (live: its owner renews it every ${seconds(renewalIntervalSeconds(lockTimeoutSeconds))})`;
    case 'gone': {
      const takeover = seconds(Math.max(0, lockTimeoutSeconds - ageSeconds));
      return `${age} (its owner is gone: it missed its renewals; a retry takes it over in ${takeover}, \`key release --force\` at once)`;
    }
    case 'expired':
      return `${age} (expired: its owner is gone; the next retry takes it over)`;
  }
}

function renewalIntervalSeconds(lockTimeoutSeconds: number): number {
  return lockTimeoutSeconds / RENEWALS_PER_LEASE;
}
