import { describe, expect, it } from '@jest/globals';
import { isInternalAddress } from '../../src/webhooks/address-policy.js';
import { refusalOf } from '../../src/webhooks/url-policy.js';

// Pure: which addresses a webhook may never reach (no SSRF), and the URL checks on IP literals (no DNS).
describe('webhook address policy', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd12:3456::1', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.1.2.3', 'ff02::1', 'not-an-ip',
    // IPv4-compatible, -mapped, -translated and NAT64 forms of internal IPv4 addresses, dotted and in hex.
    '::127.0.0.1', '::7f00:1', '::10.0.0.1', '::a9fe:a9fe', '::ffff:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '::ffff:0:a00:1',
    '64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '0:0:0:0:ffff:0:7f00:1', '0000:0000:0000:0000:0000:0000:7f00:0001',
    // 6to4 and Teredo relays, NAT64's local-use prefix: refused whole.
    '2002:7f00:1::1', '2002:808:808::1', '2001:0:4136:e378::1', '64:ff9b:1::808:808',
  ])('%s is internal', (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '::ffff:0:808:808', '64:ff9b::8.8.8.8', '2a00:1450::ffff:7f00:1'])('%s is public', (address) => {
    expect(isInternalAddress(address)).toBe(false);
  });

  it('refuses http, credentials and internal IP literals; allows them all when insecure URLs are allowed', async () => {
    expect(await refusalOf('http://93.184.215.14/', false)).toBe('url must use https');
    expect(await refusalOf('https://user:pw@93.184.215.14/', false)).toBe('url must not carry credentials');
    expect(await refusalOf('https://[::ffff:7f00:1]/', false)).toMatch(/not allowed/);
    expect(await refusalOf('https://10.0.0.1/', false)).toMatch(/not allowed/);
    expect(await refusalOf('https://[::127.0.0.1]/', false)).toMatch(/not allowed/);
    expect(await refusalOf('https://[::ffff:0:127.0.0.1]/', false)).toMatch(/not allowed/);
    expect(await refusalOf('ftp://93.184.215.14/', true)).toBe('url must use https');
    expect(await refusalOf('https://93.184.215.14/hooks', false)).toBeUndefined();
    expect(await refusalOf('http://127.0.0.1:8080/hooks', true)).toBeUndefined();
  });

  it.each([
    ['CR LF (a forged log line)', 'https://93.184.215.14/hooks\r\n2026-12-04 INFO all good'],
    ['ESC (a terminal escape)', 'https://93.184.215.14/\u001b[2J'],
    ['NUL', 'https://93.184.215.14/\u0000'],
    ['a tab, which the URL parser would drop silently', 'https://93.184.215.14/a\tb'],
    ['a C1 control', 'https://93.184.215.14/\u009b'],
    ['a lone surrogate', 'https://93.184.215.14/\ud800'],
    ['a bidirectional override', 'https://93.184.215.14/\u202egpj.exe'],
  ])('refuses a URL with %s, insecure URLs allowed or not', async (_what, url) => {
    expect(await refusalOf(url, false)).toBe('url must not contain control characters');
    expect(await refusalOf(url, true)).toBe('url must not contain control characters');
  });

  it('says the same for a host that does not resolve and one that is internal: no DNS oracle', async () => {
    const unresolvable = await refusalOf('https://no-such-host.invalid/hooks', false);
    const internal = await refusalOf('https://localhost/hooks', false);
    expect(unresolvable).toBe("url's host no-such-host.invalid is not allowed: it must resolve, and only to public addresses");
    expect(internal).toBe(unresolvable!.replace('no-such-host.invalid', 'localhost'));
  });
});
