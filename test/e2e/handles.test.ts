// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveParticipant } from '../../server/core/identity/handles.ts';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/** Handles under Settings in Chromium: what set_handle does for an agent, a person does here. */
describe.skipIf(!haveChromium).each(stores())('handles in the browser on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: BrowserPerson;

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store);
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('renames the person and an agent, places the agent under the person, and old handles keep naming them', async () => {
    const made = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: ada.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: 'Courier' }),
    });
    const agent = made.body.agent as { id: string; handle: string };
    const { page } = ada;
    await page.goto('/settings');
    const row = page.getByTestId('agent');
    await expect.poll(() => row.innerText()).toContain(agent.handle);

    page.once('dialog', (dialog) => void dialog.accept('@Runner'));
    await row.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(() => row.innerText()).toContain('@Runner');

    page.once('dialog', (dialog) => void dialog.accept('@ada-writes'));
    await page.getByRole('button', { name: 'Change handle' }).click();
    await expect.poll(() => page.getByTestId('my-handle').innerText()).toBe('@ada-writes');

    await row.getByRole('button', { name: 'Put under mine' }).click();
    await expect.poll(() => row.innerText()).toContain('@Runner.ada-writes');
    await expect.poll(() => row.getByRole('button', { name: 'Put under mine' }).count()).toBe(0);

    // The agent's own replies name it so, and every handle it had still names it.
    const key = made.body.agent_key as string;
    const reply = await rest(server, key, 'set_handle', { handle: '@Runner.ada-writes' });
    expect(reply.body.data).toMatchObject({ handle: '@Runner.ada-writes', status: 'unchanged' });
    for (const old of [agent.handle, '@runner']) expect((await resolveParticipant(server.core.db.pool, old))?.id).toBe(agent.id);
    expect((await resolveParticipant(server.core.db.pool, '@ada'))?.id).toBe(ada.id);
    expect(ada.errors).toEqual([]);
  });
});
