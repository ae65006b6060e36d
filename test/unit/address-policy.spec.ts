import { describe, expect, it } from '@jest/globals';
import { isInternalAddress } from '../../src/webhooks/address-policy.js';
import { refusalOf } from '../../src/webhooks/url-policy.js';

// Pure: which addresses a webhook may never reach (no SSRF), and the URL checks on IP literals (no DNS).
describe('webhook address policy', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd12:3456::1', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.1.2.3', 'ff02::1', 'not-an-ip',
  ])('%s is internal', (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) => {
    expect(isInternalAddress(address)).toBe(false);
  });

  it('refuses http, credentials and internal IP literals; allows them all when insecure URLs are allowed', async () => {
    expect(await refusalOf('http://93.184.215.14/', false)).toBe('url must use https');
    expect(await refusalOf('https://user:pw@93.184.215.14/', false)).toBe('url must not carry credentials');
    expect(await refusalOf('https://[::ffff:7f00:1]/', false)).toMatch(/internal address/);
    expect(await refusalOf('https://10.0.0.1/', false)).toMatch(/internal address/);
    expect(await refusalOf('ftp://93.184.215.14/', true)).toBe('url must use https');
    expect(await refusalOf('https://93.184.215.14/hooks', false)).toBeUndefined();
    expect(await refusalOf('http://127.0.0.1:8080/hooks', true)).toBeUndefined();
  });
});
