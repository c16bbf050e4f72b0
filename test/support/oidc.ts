import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export type Account = { email: string; email_verified: boolean; name: string };

/**
 * A real OpenID provider in the test's process (panva's `oidc-provider`, the certified implementation)
 * with its development login pages: any login name signs in as the account of that name. The issuer
 * URL is known before the service starts; the client is registered once the service's callback is.
 */
export async function startOidcProvider(accounts: Record<string, Account>) {
  let provider: Provider | undefined;
  const server = createServer((req, res) => {
    if (provider) return void provider.callback()(req, res);
    res.statusCode = 503;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    clientId: 'dotpad',
    clientSecret: 'dotpad-test-secret',
    /** Registers the service as a client, with its callback. */
    register(redirectUri: string) {
      provider = new Provider(issuer, {
        clients: [{ client_id: 'dotpad', client_secret: 'dotpad-test-secret', redirect_uris: [redirectUri], response_types: ['code'], grant_types: ['authorization_code'] }],
        pkce: { required: () => true },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        findAccount: (_ctx, id) => {
          const account = accounts[id];
          return account ? { accountId: id, claims: () => ({ sub: id, ...account }) } : undefined;
        },
        cookies: { keys: ['dotpad-test-cookie-key'] },
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
