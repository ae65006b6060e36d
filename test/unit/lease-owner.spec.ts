import { describe, expect, it } from '@jest/globals';
import { describeLease, leaseOwnerOf } from '../../src/ops/lease-owner.js';

/** What `ops key show` and `ops pagos pending` say of an in-flight lease's owner, from its age (lock timeout 60 s: renewed every 20 s). */
describe('the owner of an in-flight lease', () => {
  const lease = (leaseAgeSeconds: number, leaseExpired = false) => ({ leaseAgeSeconds, leaseExpired });

  it.each([
    [0, 'live'],
    [19.9, 'live'],
    // One renewal late may be a slow one.
    [39.9, 'live'],
    // Two renewals missed: killed or hung, though a retry may not take the claim over yet.
    [40.1, 'gone'],
    [59.9, 'gone'],
  ])('renewed %d s ago is %s', (age, owner) => {
    expect(leaseOwnerOf(lease(age), 60)).toBe(owner);
  });

  it('past the lock timeout (PostgreSQL\'s verdict) it is expired, whatever the age says', () => {
    expect(leaseOwnerOf(lease(60.5, true), 60)).toBe('expired');
  });

  it('key show says a killed owner is gone, not that it renews the lease', () => {
    expect(describeLease(lease(45), 60)).toBe('45.0 s (its owner is gone: it missed its renewals; a retry takes it over in 15.0 s, `key release --force` at once)');
    expect(describeLease(lease(5), 60)).toBe('5.0 s (live: its owner renews it every 20.0 s)');
    expect(describeLease(lease(75, true), 60)).toBe('75.0 s (expired: its owner is gone; the next retry takes it over)');
  });
});
