import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Addresses a webhook may never reach unless insecure URLs are allowed: the service's own network
 * and everything that is not the public internet (no SSRF). An IPv6 address that carries an IPv4
 * address (IPv4-compatible, -mapped, -translated, NAT64's well-known prefix) is checked as that
 * IPv4 address too: `[::127.0.0.1]` and `[::ffff:0:127.0.0.1]` are loopback.
 */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv4');
}
// 6to4 (2002::/16) and Teredo (2001::/32, in 2001::/23) are refused whole: relays nobody should
// need, which would carry the request to the IPv4 address inside. So is NAT64's local-use prefix.
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv6');
}

/**
 * The first 12 bytes of the IPv6 forms whose last 4 are an IPv4 address: IPv4-compatible (::/96,
 * deprecated), IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96, RFC 2765), and NAT64's
 * well-known prefix (64:ff9b::/96, RFC 6052), through which a NAT64 gateway reaches that address.
 */
const V4_CARRYING_PREFIXES = [
  '0000:0000:0000:0000:0000:0000', '0000:0000:0000:0000:0000:ffff', '0000:0000:0000:0000:ffff:0000', '0064:ff9b:0000:0000:0000:0000',
];

/** True for loopback, private, link-local, shared, reserved, documentation and multicast addresses. */
export function isInternalAddress(address: string): boolean {
  if (isIPv4(address)) return INTERNAL.check(address, 'ipv4');
  if (!isIPv6(address)) return true;
  if (INTERNAL.check(address, 'ipv6')) return true;
  const groups = ipv6Groups(address.replace(/%.*$/, ''));
  if (!V4_CARRYING_PREFIXES.includes(groups.slice(0, 6).join(':'))) return false;
  const [high, low] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)];
  return INTERNAL.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, 'ipv4');
}

/** The eight groups of a valid IPv6 address, four hexadecimal digits each (`::` expanded, a dotted tail converted). */
function ipv6Groups(address: string): string[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const hex = dotted
    ? address.slice(0, dotted.index) + [[1, 2], [3, 4]].map(([a, b]) => ((Number(dotted[a!]) << 8) | Number(dotted[b!])).toString(16)).join(':')
    : address;
  const [head, tail] = hex.split('::') as [string, string | undefined];
  const split = (part: string | undefined) => (part ? part.split(':') : []);
  const missing = 8 - split(head).length - split(tail).length;
  const groups = tail === undefined ? split(head) : [...split(head), ...Array<string>(missing).fill('0'), ...split(tail)];
  return groups.map((group) => group.padStart(4, '0').toLowerCase());
}
