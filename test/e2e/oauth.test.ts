// @module-tag heavy
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, ensureClientBuilt, haveChromium, launchBrowser } from '../support/browser.ts';
import { request, signIn, startTestServer, type TestServer } from '../support/server.ts';

/**
 * The OAuth consent page in headless Chromium, as a person meets it when their assistant connects:
 * signed out first (the sign-in page brings them back), the page itself at desktop and phone width,
 * Allow taking them back to the app with a code, without JavaScript too, and the connected app in
 * Settings, revoked there.
 */
const SHOTS = process.env.SHOTS_DIR ?? '/work/shots/oauth';

describe.skipIf(!haveChromium)('the OAuth consent page in the browser', () => {
  let server: TestServer;
  let browser: Browser;
  let callback: http.Server;
  let redirectUri: string;
  const arrived: URL[] = [];

  beforeAll(async () => {
    ensureClientBuilt();
    mkdirSync(SHOTS, { recursive: true });
    server = await startTestServer('pglite');
    browser = await launchBrowser();
    // The app's own loopback callback, as a native host would run it.
    callback = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://127.0.0.1');
      // Chromium asks the app's origin for its favicon too.
      if (url.pathname === '/callback') arrived.push(url);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>App</title><h1>Connected</h1>');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()));
  });

  async function authorizeUrl(clientName: string, scope = 'svc:read svc:write') {
    const base = server.core.config.baseUrl;
    const client = await request(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: clientName, redirect_uris: [redirectUri] }) });
    expect(client.status).toBe(201);
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(`${base}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.body.client_id,
      redirect_uri: redirectUri,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      scope,
      state: 'browser-state',
    }).toString();
    return url.href;
  }

  it('signs the person in, asks them, and sends them back with a code; Settings lists and revokes the app', async () => {
    const base = server.core.config.baseUrl;
    const context = await browserContext(browser, base);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(await authorizeUrl('Pocket Assistant'));
    await expect.poll(() => new URL(page.url()).pathname).toBe('/signin');
    await page.locator('summary', { hasText: 'Development sign-in' }).click();
    await page.getByLabel('Name').fill('Ada');
    await page.getByLabel('Email').last().fill('ada-oauth@example.test');
    await page.getByRole('button', { name: 'Sign in' }).last().click();

    await page.getByRole('heading', { name: 'Connect Pocket Assistant to your Dotpad account?' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
    await expect.poll(() => page.getByTestId('unverified').isVisible()).toBe(true);
    expect(await page.getByTestId('redirect-host').innerText()).toBe(new URL(redirectUri).host);
    expect(await page.getByTestId('scopes').innerText()).toContain('Post, start threads');
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.screenshot({ path: `${SHOTS}/consent-desktop.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/consent-390.png`, fullPage: true });

    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Connected' }).waitFor();
    const back = arrived.at(-1)!;
    expect(back.searchParams.get('code')).toMatch(/^svccode_/);
    expect(back.searchParams.get('state')).toBe('browser-state');
    expect(back.searchParams.get('iss')).toBe(base);

    // Until the app exchanges the code there is no connection to list.
    const session = (await context.cookies()).find((c) => c.name === 'svc_session')!;
    const pending = await request(`${base}/api/settings/credentials`, { method: 'POST', headers: { cookie: `svc_session=${session.value}`, 'x-svc': '1', origin: base, 'content-type': 'application/json' }, body: '{}' });
    expect(pending.body.apps).toEqual([]);
    await context.close();
    expect(errors).toEqual([]);
  });

  it('works without JavaScript', async () => {
    const base = server.core.config.baseUrl;
    const person = await signIn({ url: base }, 'Grace', 'grace-oauth@example.test');
    const plain = await browser.newContext({ baseURL: base, javaScriptEnabled: false });
    const [name, ...value] = person.cookie.split('=');
    await plain.addCookies([{ name: name!, value: value.join('='), url: base }]);
    const page = await plain.newPage();
    const url = await authorizeUrl('Plain Reader', 'svc:read');
    await page.goto(url);
    expect(await page.getByTestId('scopes').innerText()).not.toContain('Post');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Connected' }).waitFor();
    const back = arrived.at(-1)!;
    const code = back.searchParams.get('code')!;
    expect(code).toMatch(/^svccode_/);
    await plain.close();
  });

  it('shows Connected apps in Settings and revokes one with its button', async () => {
    const base = server.core.config.baseUrl;
    const person = await signIn({ url: base }, 'Hedy', 'hedy-oauth@example.test');
    const context = await browserContext(browser, base);
    const [name, ...value] = person.cookie.split('=');
    await context.addCookies([{ name: name!, value: value.join('='), url: base }]);
    const page = await context.newPage();
    // Consent and exchange through the page and the token endpoint, as a host would.
    const verifier = oauth.generateRandomCodeVerifier();
    const client = (await request(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Desk Helper', redirect_uris: [redirectUri] }) })).body;
    const url = new URL(`${base}/oauth/authorize`);
    url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }).toString();
    await page.goto(url.href);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Connected' }).waitFor();
    const code = arrived.at(-1)!.searchParams.get('code')!;
    const tokens = await request(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: client.client_id, redirect_uri: redirectUri, code_verifier: verifier }).toString(),
    });
    expect(tokens.status, tokens.text).toBe(200);

    await page.goto('/settings');
    const app = page.getByTestId('connected-app');
    await app.waitFor();
    expect(await app.innerText()).toContain('Desk Helper');
    expect(await app.innerText()).toContain('unverified app');
    await app.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/settings-apps.png`, fullPage: true });
    page.once('dialog', (dialog) => void dialog.accept());
    await app.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => page.getByTestId('connected-app').count()).toBe(0);
    const refused = await request(`${base}/api/v1/tools/check_inbox`, { method: 'POST', headers: { authorization: `Bearer ${tokens.body.access_token}` }, body: '{}' });
    expect(refused.status).toBe(401);
    await context.close();
  });
});
