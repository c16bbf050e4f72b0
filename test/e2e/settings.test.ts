// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/** Settings and the agent's link page in Chromium: what a person does there, an agent sees over the API. */
describe.skipIf(!haveChromium).each(stores())('settings in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let dana: BrowserPerson;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    dana = await personInBrowser(browser, server, 'Dana');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('adds an agent with a key shown once, makes it another key, and unlinks it', async () => {
    const { page } = dana;
    await page.goto('/settings');
    await page.getByLabel('Name').fill('Page Agent');
    await page.getByRole('button', { name: 'Add agent' }).click();
    const key = (await page.getByTestId('shown-value').innerText()).trim();
    expect(key).toMatch(/^svca_/);
    // The key works for the agent, which is linked to Dana.
    const reply = await rest(server, key, 'create_hub', { name: 'From the key' });
    expect(reply.status).toBe(200);
    expect(reply.body.data.linked_to).toMatchObject({ id: dana.id });
    await page.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.getByTestId('agent').innerText()).toContain('1 key');

    await page.getByRole('button', { name: 'New key' }).click();
    const second = (await page.getByTestId('shown-value').innerText()).trim();
    expect(second).not.toBe(key);
    await expect.poll(() => page.getByTestId('agent').innerText()).toContain('2 keys');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Unlink' }).click();
    await expect.poll(() => page.getByTestId('agent').count()).toBe(0);
    expect((await rest(server, key, 'open_hub', { hub: 'x' })).status).toBe(401);
    expect((await rest(server, second, 'open_hub', { hub: 'x' })).status).toBe(401);
    expect(dana.errors.filter((e) => !/ 40[14] /.test(e))).toEqual([]);
  });

  it("links a self-registered agent from its link page, and by a line from Settings", async () => {
    const { page } = dana;
    const registered = await request(`${server.url}/api/v1/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Wanderer' }),
    });
    const agentKey = registered.body.agent_key as string;
    const linkUrl = new URL(registered.body.link_url as string);
    await page.goto(`/link${linkUrl.hash}`);
    await expect.poll(() => page.getByTestId('link-preview').innerText()).toContain('Wanderer');
    await page.getByRole('button', { name: 'Link' }).click();
    await expect.poll(() => page.getByTestId('link-preview').innerText()).toContain('You asked to link this agent');
    const asked = await rest(server, agentKey, 'link', { action: 'new' });
    const danaHandle = asked.body.data.link_requests[0].handle as string;
    expect((await rest(server, agentKey, 'link', { action: 'confirm', handle: danaHandle })).body.data.status).toBe('linked');
    await page.reload();
    await expect.poll(() => page.getByTestId('link-preview').innerText()).toContain('This agent is linked to you.');

    // A second agent takes the line Settings shows.
    const other = await request(`${server.url}/api/v1/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Second' }),
    });
    await page.goto('/settings');
    await page.getByRole('button', { name: 'Make a link line' }).click();
    const line = (await page.getByTestId('shown-value').innerText()).trim();
    expect(line).toMatch(/^Link to @\S+ with DOT-\d{4}$/);
    const linked = await rest(server, other.body.agent_key, 'link', { action: 'code', line });
    expect(linked.body.data.linked_to).toMatchObject({ id: dana.id });
    await page.reload();
    await expect.poll(() => page.getByTestId('agent').allInnerTexts()).toEqual([expect.stringContaining('Wanderer'), expect.stringContaining('Second')]);
  });
});
