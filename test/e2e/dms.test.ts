// @module-tag heavy
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson as Person } from '../support/browser.ts';
import { appTool, mcpClient, poke, registerAgent, rest, startTestServer, stores, type TestServer } from '../support/server.ts';
import { addMember } from './browserPeople.ts';

/** The /dm pages in Chromium: an agent's DM over MCP reaches a person, who answers; a stranger's request is declined. */
describe.skipIf(!haveChromium).each(stores())('direct messages in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: Person;
  let mcp: Client;
  let agent: { key: string; id: string; handle: string };

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    const created = await appTool(server, ada.cookie, 'create_hub', { name: 'Reading room' });
    if (created.status !== 200) throw new Error(`create_hub failed: ${created.text}`);
    agent = await registerAgent(server, 'Librarian');
    await addMember(server, created.body.data.hub_id, agent.id);
    mcp = await mcpClient(server, agent.key);
  });

  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await server?.close();
  });

  it('a person reads an agent’s DM under DMs and answers it; the agent reads the answer', async () => {
    const sent = await mcp.callTool({ name: 'start_dm', arguments: { with: ada.id, body: 'Your books are due on Friday.' } });
    expect(sent.isError).toBeFalsy();
    const dmId = (sent.structuredContent as { dm_id: string }).dm_id;
    await ada.page.goto('/');
    await ada.page.getByRole('link', { name: 'DMs' }).click();
    await ada.page.waitForURL('**/dm');
    await ada.page.getByRole('link', { name: 'Librarian' }).click();
    await ada.page.waitForURL(`**/dm/${dmId}`);
    await expect.poll(() => ada.page.locator('.message .body').allInnerTexts()).toEqual(['Your books are due on Friday.']);
    await ada.page.getByRole('textbox', { name: 'Message' }).fill('Thanks, I will bring them back.');
    await ada.page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => ada.page.locator('.message .body').allInnerTexts()).toEqual(['Your books are due on Friday.', 'Thanks, I will bring them back.']);
    const read = await rest(server, agent.key, 'list_dms', { dm_id: dmId });
    expect(read.body.text).toContain('Thanks, I will bring them back.');
    // The agent's answer shows on the open page without a reload.
    await mcp.callTool({ name: 'post_reply', arguments: { thread_id: dmId, body: 'Noted.' } });
    await expect.poll(() => ada.page.locator('.message .body').allInnerTexts()).toContain('Noted.');
    expect(ada.errors).toEqual([]);
  });

  it('shows a DM link live only when its author reads verified', async () => {
    const sent = await mcp.callTool({ name: 'start_dm', arguments: { with: ada.id, body: 'Catalogue: [the list](https://books.example/list)' } });
    const dmId = (sent.structuredContent as { dm_id: string }).dm_id;
    const message = (text: string) => ada.page.locator('.message .body', { hasText: text });
    await ada.page.goto(`/dm/${dmId}`);
    // A new agent does not read verified: its link is text naming the host.
    await expect.poll(() => message('Catalogue').innerText()).toBe('Catalogue: the list [link to books.example]');
    // The marker is its one link, and it leads to the warning page, not to the address.
    expect(await message('Catalogue').locator('a').count()).toBe(1);
    expect(await message('Catalogue').locator('a').getAttribute('href')).toBe(`/out?${new URLSearchParams({ u: 'https://books.example/list' })}`);
    // Its person confirms an address and it is two days old: it reads verified, and its link is live.
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${agent.id})`);
    await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id = ${agent.id}`);
    await ada.page.reload();
    await expect.poll(() => message('Catalogue').getByRole('link', { name: 'the list' }).count()).toBe(1);
    expect(await message('Catalogue').getByRole('link', { name: 'the list' }).getAttribute('href')).toBe('https://books.example/list');
    expect(ada.errors).toEqual([]);
  });

  it('a person starts a DM from the page, finding the agent by name, and blocks it', async () => {
    await ada.page.goto('/dm');
    // Typing part of a name suggests the people she shares a hub with, by handle.
    const to = ada.page.getByRole('combobox', { name: 'To (start typing a name, or a @handle)' });
    await to.fill('libr');
    const suggested = () => ada.page.locator('#person-suggestions option').evaluateAll((options) => options.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
    await expect.poll(suggested).toEqual([[agent.handle.startsWith('@') ? agent.handle : `@${agent.handle}`, 'Librarian (agent)']]);
    await to.fill(agent.handle);
    await ada.page.getByRole('textbox', { name: 'Message' }).fill('One more thing.');
    await ada.page.getByRole('button', { name: 'Send' }).click();
    await ada.page.waitForURL('**/dm/dm_*');
    await expect.poll(() => ada.page.locator('.message .body').allInnerTexts()).toContain('One more thing.');
    await ada.page.getByRole('button', { name: 'Block' }).click();
    await expect.poll(() => ada.page.getByTestId('dm-state').innerText()).toContain('Blocked by you');
    // The agent is told what a decline tells it.
    const listed = await rest(server, agent.key, 'list_dms', {});
    expect(listed.body.data.dms[0].state).toBe('declined');
    expect(ada.errors).toEqual([]);
  });

  it('shows the sender their own request as waiting, with Withdraw and no Decline; withdrawn, nobody can accept it open', async () => {
    // Bob shares no hub with Ada and reads verified, so his message goes as a request.
    const bob = await personInBrowser(browser, server, 'Bob');
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now(), created_at = now() - interval '2 days' WHERE id = ${bob.id}`);
    const sent = await appTool(server, bob.cookie, 'start_dm', { with: ada.id, body: 'Hello Ada, a question about the reading room.' });
    expect(sent.body.data.state).toBe('waiting');
    const dmId = sent.body.data.dm_id as string;
    await bob.page.goto('/dm');
    const row = bob.page.locator('.dms li', { hasText: 'Ada' });
    await expect.poll(() => row.innerText()).toContain('Request sent, waiting · 1 message');
    await row.getByRole('link', { name: 'Ada' }).click();
    await bob.page.waitForURL(`**/dm/${dmId}`);
    const actions = bob.page.locator('.actions');
    await expect.poll(() => actions.getByRole('button').allInnerTexts()).toEqual(['Withdraw request']);
    await actions.getByRole('button', { name: 'Withdraw request' }).click();
    await expect.poll(() => bob.page.getByTestId('dm-state').innerText()).toContain('Declined');
    expect(await actions.getByRole('button', { name: 'Accept' }).count()).toBe(0);
    // Neither side can accept a withdrawn request open: only its recipient could have let it start.
    for (const cookie of [bob.cookie, ada.cookie]) expect((await appTool(server, cookie, 'respond_to_dm', { dm_id: dmId, action: 'accept' })).status).toBe(403);
    expect(bob.errors.filter((e) => !e.includes('403'))).toEqual([]);
    await bob.context.close();
  });
});
