import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../server/core/identity/clientMetadata.ts';
import { knownHostOf } from '../../server/core/identity/oauthHosts.ts';
import { redirectMatches, redirectUriProblem } from '../../server/core/identity/redirectUris.ts';

/** The pure rules of the OAuth server: which addresses a metadata fetch may reach, redirect URIs, and the host label. */
describe('OAuth rules', () => {
  it('counts only public unicast addresses as public', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPublicAddress(address), address).toBe(true);
    for (const address of [
      '127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1',
      '::1', '::', 'fe80::1', 'fc00::1', 'fd12::1', 'ff02::1', '2001:db8::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1', 'not-an-ip',
    ]) expect(isPublicAddress(address), address).toBe(false);
  });

  it('takes https, loopback http and reverse-domain app schemes as redirect URIs', () => {
    for (const uri of ['https://a.example/cb', 'http://127.0.0.1:8080/cb', 'http://[::1]/cb', 'http://localhost/cb', 'com.example.app:/oauth']) expect(redirectUriProblem(uri), uri).toBeNull();
    for (const uri of ['http://a.example/cb', 'https://a.example/cb#f', 'myapp:/cb', 'data:text/html,x', 'relative/cb']) expect(redirectUriProblem(uri), uri).not.toBeNull();
  });

  it('matches redirect URIs exactly, except a loopback port', () => {
    const registered = ['https://a.example/cb', 'http://127.0.0.1:5000/cb?x=1'];
    expect(redirectMatches(registered, 'https://a.example/cb')).toBe(true);
    expect(redirectMatches(registered, 'http://127.0.0.1:6000/cb?x=1')).toBe(true);
    expect(redirectMatches(registered, 'http://127.0.0.1/cb?x=1')).toBe(true);
    for (const near of ['https://a.example/cb/', 'https://a.example/CB', 'http://127.0.0.1:6000/cb', 'http://localhost:5000/cb?x=1', 'https://a.example:443/cb?']) {
      expect(redirectMatches(registered, near), near).toBe(false);
    }
  });

  it('labels a known assistant host by its callbacks or metadata origin, never by a name', () => {
    const config = { verifiedClients: ['client_vouched'] };
    expect(knownHostOf(config, { clientId: 'client_a', redirectUris: ['https://claude.ai/api/mcp/auth_callback'] })).toBe('Claude');
    expect(knownHostOf(config, { clientId: 'client_a', redirectUris: ['https://claude.ai/api/mcp/auth_callback', 'https://evil.example/cb'] })).toBeNull();
    expect(knownHostOf(config, { clientId: 'client_a', redirectUris: ['https://chatgpt.com/connector/oauth/abc_123'] })).toBe('ChatGPT');
    expect(knownHostOf(config, { clientId: 'https://claude.ai/oauth/client.json', redirectUris: ['https://elsewhere.example/cb'] })).toBe('Claude');
    expect(knownHostOf(config, { clientId: 'https://claude.ai.evil.example/client.json', redirectUris: ['https://x.example/cb'] })).toBeNull();
    expect(knownHostOf(config, { clientId: 'client_vouched', redirectUris: ['https://x.example/cb'] })).toBe('verified by this server');
    expect(knownHostOf(config, { clientId: 'client_other', redirectUris: ['https://x.example/cb'] })).toBeNull();
  });
});
