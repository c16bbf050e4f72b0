// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { sql } from 'slonik';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { poke, request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';
import { shoot } from './browserPeople.ts';


/**
 * Settings and the agent's link page in Chromium: what a person does there, an agent sees over the
 * API; and the platform moderators' part, shown to them alone.
 */
describe.skipIf(!haveChromium).each(stores())('settings in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let dana: BrowserPerson;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store, { SVC_MODERATORS: 'mona@example.test' });
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

  it('lets a platform moderator suspend an account and lift it, and pause guests joining; others see none of it', async () => {
    const mona = await personInBrowser(browser, server, 'Mona');
    const eve = await personInBrowser(browser, server, 'Eve');
    try {
      await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = ${mona.id}`);
      const eveAgent = await request(`${server.url}/api/settings/create-agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc': '1', origin: server.url, cookie: eve.cookie },
        body: JSON.stringify({ name: 'Eve bot' }),
      });
      const eveKey = eveAgent.body.agent_key as string;
      await dana.page.goto('/settings');
      await expect.poll(() => dana.page.getByRole('heading', { name: 'Your agents' }).count()).toBe(1);
      expect(await dana.page.getByTestId('moderation').count()).toBe(0);

      const { page } = mona;
      await page.goto('/settings');
      const moderation = page.getByTestId('moderation');
      await expect.poll(() => moderation.innerText()).toContain('Platform moderation');
      await page.getByLabel('Handle or id').fill('@eve');
      await page.getByLabel('Why (kept for the record)').fill('Spam in three hubs.');
      await page.getByRole('button', { name: 'Suspend', exact: true }).click();
      await expect.poll(() => moderation.getByRole('status').innerText()).toBe('@eve is suspended, with 1 agent linked to them.');
      await expect.poll(() => page.getByTestId('suspended').innerText()).toContain('Spam in three hubs.');
      expect((await rest(server, eveKey, 'show_dotpad', {})).status).toBe(401);

      // Eve's browser is signed out, and signing in again says why it is refused.
      await eve.page.goto('/settings');
      await eve.page.waitForURL((url) => url.pathname === '/signin');
      await eve.page.locator('details.dev summary').click();
      const form = eve.page.locator('details.dev');
      await form.getByLabel('Name').fill('Eve');
      await form.getByLabel('Email').fill('eve@example.test');
      await form.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => form.innerText()).toContain('This account is suspended by the platform moderators');

      await page.getByRole('button', { name: 'Pause' }).first().click();
      await expect.poll(() => page.getByTestId('guest-registration').innerText()).toContain('Paused since');
      await page.screenshot({ path: '/tmp/moderation.png', fullPage: true });
      await page.getByTestId('guest-registration').getByRole('button', { name: 'Resume' }).click();
      await expect.poll(() => page.getByTestId('guest-registration').innerText()).toContain('Open');

      await page.getByTestId('suspended').getByRole('button', { name: 'Lift' }).click();
      await expect.poll(() => page.getByTestId('suspended').count()).toBe(0);
      expect((await rest(server, eveKey, 'show_dotpad', {})).status).toBe(200);
      expect(mona.errors).toEqual([]);
    } finally {
      await mona.context.close();
      await eve.context.close();
    }
  });
  it('hands over a new key under the agent’s name, with copy buttons, the MCP address, an mcpServers entry and a curl line that work; and again for another key', async () => {
    const fay = await personInBrowser(browser, server, 'Fay', 'fay@example.test');
    await fay.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const { page } = fay;
    try {
      await page.goto('/settings');
      await page.getByLabel('Name').fill('Scribe');
      await page.getByRole('button', { name: 'Add agent' }).click();
      const handoff = page.getByTestId('agent-key');
      await expect.poll(() => handoff.getByRole('heading', { level: 2 }).innerText()).toMatch(/^Key for Scribe \(@scribe[\w.-]*\)$/);
      const key = (await handoff.getByTestId('shown-value').innerText()).trim();
      expect(key).toMatch(/^svca_/);
      await handoff.getByRole('button', { name: 'Copy key' }).click();
      await expect.poll(() => handoff.getByRole('status').innerText()).toBe('Key copied.');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      expect((await handoff.getByTestId('mcp-url').innerText()).trim()).toBe(`${server.core.config.baseUrl}/mcp`);
      await shoot(page, 'settings-agent-key');

      // The mcpServers entry, as pasted into a client, connects over MCP with the key.
      await handoff.getByRole('button', { name: 'Copy configuration' }).click();
      await expect.poll(() => handoff.getByRole('status').innerText()).toBe('Configuration copied.');
      const config = JSON.parse(await page.evaluate(() => navigator.clipboard.readText())) as {
        mcpServers: Record<string, { type: string; url: string; headers: Record<string, string> }>;
      };
      const [entry] = Object.values(config.mcpServers);
      expect(entry).toMatchObject({ type: 'http', url: `${server.core.config.baseUrl}/mcp`, headers: { Authorization: `Bearer ${key}` } });
      const client = new Client({ name: 'pasted-config', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(entry!.url), { requestInit: { headers: entry!.headers } }));
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('show_dotpad');
      } finally {
        await client.close();
      }

      // The curl line, run as written: its URL, header and body.
      const curl = (await handoff.getByTestId('curl-line').innerText()).trim();
      const [, url] = /POST (\S+)/.exec(curl)!;
      const [, auth] = /'Authorization: ([^']+)'/.exec(curl)!;
      const [, body] = /-d '([^']*)'/.exec(curl)!;
      const answer = await fetch(url!, { method: 'POST', headers: { Authorization: auth!, 'Content-Type': 'application/json' }, body });
      expect(answer.status).toBe(200);
      await handoff.getByRole('button', { name: 'Done' }).click();
      await expect.poll(() => handoff.count()).toBe(0);

      // Another key for the same agent is handed over the same way.
      await page.getByTestId('agent').getByRole('button', { name: 'New key' }).click();
      await expect.poll(() => handoff.getByRole('heading', { level: 2 }).innerText()).toMatch(/^Another key for Scribe/);
      const second = (await handoff.getByTestId('shown-value').innerText()).trim();
      expect(second).not.toBe(key);
      expect(await handoff.getByTestId('mcp-config').innerText()).toContain(`Bearer ${second}`);
      expect(await handoff.getByTestId('curl-line').innerText()).toContain(`Bearer ${second}`);
      expect((await rest(server, second, 'show_dotpad', {})).status).toBe(200);
      expect(fay.errors).toEqual([]);
    } finally {
      await fay.context.close();
    }
  });
});
