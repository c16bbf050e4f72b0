// @module-tag heavy
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, ensureClientBuilt, haveChromium, launchBrowser } from '../support/browser.ts';
import { isVerified } from '../../server/core/identity/standing.ts';
import { startOidcProvider } from '../support/oidc.ts';
import { request, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Signing in through the pages in headless Chromium against the real server, with no mail server:
 * the code is read where a newcomer reads it, at /dev/outbox. Then a verification link opened from it.
 */

describe.skipIf(!haveChromium).each(stores())('sign-in pages in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  /** The newest kept mail's text, read in the browser at /dev/outbox as a newcomer would. */
  async function newestMail(): Promise<string> {
    const outbox = await context.newPage();
    await outbox.goto('/dev/outbox');
    const text = await outbox.locator('article pre').first().innerText();
    await outbox.close();
    return text;
  }

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    context = await browserContext(browser, server.url);
    page = await context.newPage();
    // Refusals are told apart by their address; the console's "Failed to load resource" names none.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('sends a signed-out visit to an app page to /signin', async () => {
    await page.goto('/settings');
    await page.waitForURL((url) => url.pathname === '/signin' && url.searchParams.get('next') === '/settings');
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'outbox' }).getAttribute('href')).toBe('/dev/outbox');
  });

  it('signs in with the code from /dev/outbox, after a wrong one, and returns to the page asked for', async () => {
    await page.getByRole('textbox', { name: 'Email' }).fill('Grace@example.test');
    await page.getByRole('button', { name: 'Send me a code' }).click();
    await page.waitForURL((url) => url.pathname === '/signin/code' && url.searchParams.get('next') === '/settings');
    expect(await page.getByRole('status').innerText()).toContain('kept locally');
    // The code is what comes next: its field has the keyboard.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('code');
    const code = /^\s+(\d{6})\s*$/m.exec(await newestMail())![1]!;

    expect(await page.getByRole('textbox', { name: 'Email' }).inputValue()).toBe('Grace@example.test');
    await page.getByRole('textbox', { name: 'Code' }).fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toMatch(/not right/);

    await page.getByRole('textbox', { name: 'Code' }).fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/settings');
    await expect.poll(() => page.locator('.who').innerText()).toBe('Signed in as Grace');
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'svc_session')?.value).toMatch(/^svcs_/);
  });

  it('signs out from the header', async () => {
    const session = (await context.cookies()).find((c) => c.name === 'svc_session')!;
    await page.goto('/');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('link', { name: 'Sign in', exact: true }).count()).toBe(1);
    // Signed out, / is the public home page; the header's Sign in leads to the sign-in.
    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/signin');
    const me = await request(`${server.url}/api/me`, { headers: { cookie: `svc_session=${session.value}` } });
    expect(me.status).toBe(401);
  });

  it('asks for a confirmation link in Settings, and confirms the address from it', async () => {
    const person = await signIn(server, 'Linus', 'linus@example.test');
    const [name, ...value] = person.cookie.split('=');
    await context.addCookies([{ name: name!, value: value.join('='), url: server.url }]);
    await page.goto('/settings');
    await expect.poll(() => page.getByTestId('email-status').innerText()).toBe('linus@example.test: not confirmed');
    await page.getByRole('textbox', { name: 'Address to confirm' }).fill('linus+dotpad@example.org');
    await page.getByRole('button', { name: 'Send a confirmation link' }).click();
    await expect.poll(() => page.getByRole('status').innerText()).toContain('A link to confirm the address is on its way');
    const link = /\/verify#svcv_[A-Za-z0-9_-]+/.exec(await newestMail())![0];
    await page.goto(link);
    await expect.poll(() => page.getByRole('status').first().innerText()).toContain('The address is confirmed for Linus');
    expect(new URL(page.url()).hash).toBe('');
    // The link works once (a page of its own: the same address with a new fragment would not reload).
    const again = await context.newPage();
    await again.goto(link);
    await expect.poll(() => again.getByRole('alert').innerText()).toMatch(/not valid/);
    await again.close();
    await page.goto('/settings');
    await expect.poll(() => page.getByTestId('email-status').innerText()).toBe('linus+dotpad@example.org: confirmed');
  });

  it('logged nothing wrong in the browser: only the signed-out checks and the refused code', () => {
    const expected = new Set(['401 /api/me', '400 /signin/code/verify']);
    expect(errors.filter((e) => !expected.has(e))).toEqual([]);
    expect(errors).toContain('400 /signin/code/verify');
  });
});

describe.skipIf(!haveChromium).each(stores())('sign-in through an OpenID provider on %s', (store) => {
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let server: TestServer;
  let browser: Browser;

  /** A fresh browser on the service's own origin (the provider sends it back there). */
  async function freshPage(): Promise<Page> {
    return (await browserContext(browser, server.core.config.baseUrl)).newPage();
  }

  /** At the provider's development pages: any password, then the consent. */
  async function signInAtProvider(page: Page, login: string) {
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  beforeAll(async () => {
    ensureClientBuilt();
    provider = await startOidcProvider({
      grace: { email: 'Grace@Example.org', email_verified: true, name: 'Grace Hopper' },
      unproven: { email: 'unproven@example.org', email_verified: false, name: 'Unproven' },
    });
    server = await startTestServer(store, { SVC_OIDC_ISSUER: provider.issuer, SVC_OIDC_CLIENT_ID: provider.clientId, SVC_OIDC_CLIENT_SECRET: provider.clientSecret });
    provider.register(`${server.core.config.baseUrl}/auth/callback`);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await provider?.close();
  });

  it('goes from /signin to the provider with PKCE and comes back signed in and verified, on the page asked for', async () => {
    const page = await freshPage();
    const asked: URL[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.origin === provider.issuer && url.pathname === '/auth') asked.push(url);
    });
    await page.goto('/settings');
    await page.waitForURL((url) => url.origin === provider.issuer);
    const authorize = asked[0]!.searchParams;
    expect(authorize.get('code_challenge_method')).toBe('S256');
    expect(authorize.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.get('state')).toBeTruthy();
    expect(authorize.get('nonce')).toBeTruthy();
    expect(authorize.get('redirect_uri')).toBe(`${server.core.config.baseUrl}/auth/callback`);

    await signInAtProvider(page, 'grace');
    await page.waitForURL((url) => url.pathname === '/settings');
    await expect.poll(() => page.locator('.who').innerText()).toBe('Signed in as Grace Hopper');
    const me = await page.evaluate(() => fetch('/api/me').then((r) => r.json()));
    expect(me.participant).toMatchObject({ email: 'Grace@Example.org', verified: true });
    expect(await isVerified(server.core, me.participant.id)).toBe(true);
  });

  it('turns away an address the provider has not verified, back on /signin saying why', async () => {
    const page = await freshPage();
    await page.goto('/signin/start');
    await signInAtProvider(page, 'unproven');
    await page.waitForURL((url) => url.pathname === '/signin' && url.searchParams.has('problem'));
    await expect.poll(() => page.getByRole('alert').innerText()).toMatch(/verified email address/);
    expect(new URL(page.url()).origin).toBe(server.core.config.baseUrl);
    const me = await page.evaluate(() => fetch('/api/me').then((r) => r.status));
    expect(me).toBe(401);
  });

  it('refuses a callback this browser did not start', async () => {
    const reply = await request(`${server.url}/auth/callback?code=made-up&state=made-up`, { redirect: 'manual' });
    expect(reply.status).toBe(302);
    expect(decodeURIComponent(reply.headers.get('location')!)).toMatch(/^\/signin\?problem=This sign-in was not started in this browser/);
  });
});
