// @module-tag heavy
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { appTool, mcpClient, registerAgent, startTestServer, stores, type TestServer } from '../support/server.ts';
import { shoot } from './browserPeople.ts';

/**
 * People in the web app, in Chromium: an owner shares a hub from its page and a second person joins by
 * the link; a signed-in stranger at a hub's address they cannot read asks to join (the page the same
 * for a private hub and a missing one), and the owner lets them in from the inbox; an agent asks over
 * MCP and is let in from the members panel; a stranger on a public thread joins where they would reply.
 */

const main = (page: Page) => page.locator('main').innerText();
/** What went wrong beyond the 404 of a hub the person cannot read, which the page answers with Ask to join. */
const beyondNotFound = (person: BrowserPerson) => person.errors.filter((e) => !/\b404\b/.test(e));

describe.skipIf(!haveChromium).each(stores())('sharing and joining in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let olga: BrowserPerson;
  let hub: { id: string; slug: string };

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    browser = await launchBrowser();
    olga = await personInBrowser(browser, server, 'Olga Owner', 'olga@example.test');
    const made = await appTool(server, olga.cookie, 'create_hub', { name: 'Lighthouse keepers' });
    hub = { id: made.body.data.hub_id, slug: made.body.data.slug };
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shares a hub from its page: a link for two, copied; a second person opens it and joins; the owner sees the uses left and revokes it', async () => {
    await olga.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const { page } = olga;
    await page.goto(`/h/${hub.slug}`);
    const share = page.getByTestId('share');
    await share.getByText('Share this hub').click();
    await expect.poll(() => share.innerText()).toContain('Live invites');
    await share.getByLabel('People it lets in').fill('2');
    await share.getByLabel('Days it works').fill('3');
    await share.getByRole('button', { name: 'Make invite link' }).click();
    const linkBox = share.getByLabel(/Invite link, shown only now/);
    await expect.poll(() => linkBox.inputValue()).toMatch(/\/invite#svci_/);
    const link = await linkBox.inputValue();
    await share.getByRole('button', { name: 'Copy link' }).click();
    await expect.poll(() => share.getByRole('status').innerText()).toBe('Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await expect.poll(() => share.getByTestId('live-invite').innerText()).toContain('2 of 2 uses left');
    await shoot(page, 'share-hub');

    const sam = await personInBrowser(browser, server, 'Sam Second', 'sam@example.test');
    try {
      await sam.page.goto(new URL(link).pathname + new URL(link).hash);
      const preview = sam.page.getByTestId('invite-preview');
      await expect.poll(() => preview.innerText()).toContain('Lighthouse keepers');
      expect(await preview.innerText()).toContain('Olga Owner invites you into this hub as a member');
      await shoot(sam.page, 'invite-page');
      await sam.page.getByRole('button', { name: 'Accept as Sam Second' }).click();
      await sam.page.waitForURL(`**/h/${hub.slug}`);
      await expect.poll(() => main(sam.page)).toContain('Your role: member');
      // A member is not offered Share.
      expect(await sam.page.getByTestId('share').count()).toBe(0);
      expect(sam.errors).toEqual([]);
    } finally {
      await sam.context.close();
    }

    await page.reload();
    await share.getByText('Share this hub').click();
    await expect.poll(() => share.getByTestId('live-invite').innerText()).toContain('1 of 2 uses left');
    await share.getByTestId('live-invite').getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => share.getByTestId('live-invite').count()).toBe(0);
    const preview = await fetch(`${server.url}/api/invite-preview`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc': '1' },
      body: JSON.stringify({ token: new URL(link).hash.slice(1) }),
    });
    expect(preview.status).toBe(404);
    expect(olga.errors).toEqual([]);
  });

  it('shares a thread and a pad from their pages', async () => {
    const thread = await appTool(server, olga.cookie, 'start_thread', { hub: hub.slug, title: 'Lamp rota', body: 'Who takes Tuesday?' });
    const pad = await appTool(server, olga.cookie, 'create_pad', { hub: hub.slug, title: 'Rota' });
    for (const [path, noun, title] of [
      [`/t/${thread.body.data.thread_id}`, 'thread', 'Lamp rota'],
      [`/p/${pad.body.data.pad_id}`, 'pad', 'Rota'],
    ] as const) {
      await olga.page.goto(path);
      const share = olga.page.getByTestId('share');
      await share.getByText(`Share this ${noun}`).click();
      await share.getByRole('button', { name: 'Make invite link' }).click();
      const linkBox = share.getByLabel(/Invite link, shown only now/);
      await expect.poll(() => linkBox.inputValue()).toMatch(/\/invite#svci_/);
      const token = new URL(await linkBox.inputValue()).hash.slice(1);
      const preview = await fetch(`${server.url}/api/invite-preview`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc': '1' },
        body: JSON.stringify({ token }),
      });
      expect(await preview.json()).toMatchObject({ title, kind: noun });
      await expect.poll(() => share.getByTestId('live-invite').innerText()).toContain('1 of 1 uses left');
      if (noun === 'thread') await shoot(olga.page, 'share-thread');
    }
    expect(olga.errors).toEqual([]);
  });

  it('lets a stranger ask to join at a hub address they cannot read, alike for a missing hub; the owner lets them in from the inbox; the asker is told', async () => {
    const nora = await personInBrowser(browser, server, 'Nora Newcomer', 'nora@example.test');
    try {
      await nora.page.goto('/h/no-such-hub-here');
      await expect.poll(() => nora.page.getByTestId('ask-to-join').isVisible()).toBe(true);
      const missing = await main(nora.page);
      const missingTitle = await nora.page.title();
      await nora.page.goto(`/h/${hub.slug}`);
      await expect.poll(() => nora.page.getByTestId('ask-to-join').isVisible()).toBe(true);
      // Nothing tells the private hub from the missing one: the same words, the same title.
      expect(await main(nora.page)).toBe(missing);
      expect(await nora.page.title()).toBe(missingTitle);
      expect(missing).not.toContain('Lighthouse');
      await nora.page.getByLabel('A note for the owners (optional)').fill('I keep the lamp on Sundays.');
      await shoot(nora.page, 'ask-to-join');
      await nora.page.getByRole('button', { name: 'Ask to join' }).click();
      await expect.poll(() => nora.page.getByTestId('ask-to-join').getByRole('status').innerText()).toContain('Asked.');

      await olga.page.goto('/inbox');
      const request = olga.page.locator('[data-kind="join_request"]', { hasText: 'Nora Newcomer' });
      await expect.poll(() => request.innerText()).toContain('I keep the lamp on Sundays.');
      expect(await request.innerText()).toContain(`asks to join ${hub.slug}`);
      await shoot(olga.page, 'inbox-join-request');
      await request.getByRole('button', { name: 'Let in' }).click();
      await expect.poll(() => request.getByRole('status').innerText()).toBe('Nora Newcomer is a member now.');
      // The item stays, read, after the page is read again.
      await olga.page.reload();
      await expect.poll(() => request.getAttribute('data-read')).toBe('true');
      expect(await request.innerText()).toContain('Answered.');

      await nora.page.goto('/inbox');
      const told = nora.page.locator('[data-kind="added"]');
      await expect.poll(() => told.innerText()).toContain('Olga Owner');
      expect(await told.innerText()).toContain(hub.slug);
      await told.getByRole('link', { name: hub.slug }).click();
      await nora.page.waitForURL(`**/h/${hub.slug}`);
      await expect.poll(() => main(nora.page)).toContain('Your role: member');
      expect(beyondNotFound(nora)).toEqual([]);
    } finally {
      await nora.context.close();
    }
    expect(olga.errors).toEqual([]);
  });

  it('turns away a person from the members panel, who is told; lets in an agent that asked over MCP', async () => {
    const tom = await personInBrowser(browser, server, 'Tom Turned', 'tom@example.test');
    const agent = await registerAgent(server, 'Tally');
    const mcp = await mcpClient(server, agent.key);
    try {
      await tom.page.goto(`/h/${hub.slug}`);
      await tom.page.getByRole('button', { name: 'Ask to join' }).click();
      await expect.poll(() => tom.page.getByTestId('ask-to-join').innerText()).toContain('Asked.');
      const asked = await mcp.callTool({ name: 'join_hub', arguments: { hub: hub.slug, note: 'I count the lamps.' } });
      expect(asked.structuredContent).toMatchObject({ status: 'requested' });

      // Both requests reach the owner's inbox, the agent's marked as one.
      await olga.page.goto('/inbox');
      const fromAgent = olga.page.locator('[data-kind="join_request"]', { hasText: 'Tally' });
      await expect.poll(() => fromAgent.innerText()).toContain('(agent)');
      expect(await fromAgent.innerText()).toContain('I count the lamps.');
      await expect.poll(() => olga.page.locator('[data-kind="join_request"]', { hasText: 'Tom Turned' }).count()).toBe(1);

      await olga.page.goto(`/h/${hub.slug}`);
      const tomRow = olga.page.locator('.request', { hasText: 'Tom Turned' });
      await tomRow.getByRole('button', { name: 'Turn away' }).click();
      await expect.poll(() => main(olga.page)).toContain('Tom Turned was turned away.');
      const agentRow = olga.page.locator('.request', { hasText: 'Tally' });
      await agentRow.getByRole('button', { name: 'Let in' }).click();
      await expect.poll(() => main(olga.page)).toContain('Tally is a member now.');

      const inbox = await mcp.callTool({ name: 'check_inbox', arguments: {} });
      expect((inbox.structuredContent as { items: { kind: string; hub_id?: string }[] }).items).toEqual([expect.objectContaining({ kind: 'added', hub_id: hub.id })]);
      await tom.page.goto('/inbox');
      const told = tom.page.locator('[data-kind="turned_away"]');
      await expect.poll(() => told.innerText()).toContain(`turned away your request to join ${hub.slug}`);
      await shoot(tom.page, 'inbox-turned-away');
      expect(beyondNotFound(tom)).toEqual([]);
    } finally {
      await mcp.close();
      await tom.context.close();
    }
  });

  it('offers a signed-in stranger on a public thread a join button where they would reply', async () => {
    const open = await appTool(server, olga.cookie, 'create_hub', { name: 'Harbour talk' });
    const slug = open.body.data.slug as string;
    expect((await appTool(server, olga.cookie, 'set_hub_visibility', { hub: slug, audience: 'public', confirm: true })).status).toBe(200);
    const thread = await appTool(server, olga.cookie, 'start_thread', { hub: slug, title: 'Tides', body: 'High at six.' });
    const pete = await personInBrowser(browser, server, 'Pete Passing', 'pete@example.test');
    try {
      await pete.page.goto(`/t/${thread.body.data.thread_id}`);
      const join = pete.page.getByTestId('join-hub');
      await expect.poll(() => join.innerText()).toContain('You are not a member of Harbour talk');
      await shoot(pete.page, 'thread-join');
      await join.getByRole('button', { name: 'Join Harbour talk' }).click();
      await expect.poll(() => pete.page.getByTestId('join-hub').count()).toBe(0);
      await pete.page.getByLabel('Your reply').fill('Thanks, noted.');
      await pete.page.getByRole('button', { name: 'Post reply' }).click();
      await expect.poll(() => main(pete.page)).toContain('Thanks, noted.');
      expect(pete.errors).toEqual([]);
    } finally {
      await pete.context.close();
    }
  });
});
