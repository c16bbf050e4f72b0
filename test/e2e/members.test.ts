// @module-tag heavy
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureClientBuilt, haveChromium, launchBrowser, personInBrowser, type BrowserPerson } from '../support/browser.ts';
import { appTool, registerAgent, request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * The hub page in headless Chromium against the real server: the owner lets in someone who asked,
 * names them helper, removes them, writes the Read me first and publishes after the preview, and
 * puts a pad in front beside the Read me first; a member sees who is in the hub and none of the
 * owner's buttons.
 */
describe.skipIf(!haveChromium).each(stores())('members on the hub page on %s', (store) => {
  let server: TestServer;
  let browser: Browser;
  let ada: BrowserPerson;
  let bob: BrowserPerson;
  let hub: { id: string; slug: string };

  const row = (who: BrowserPerson, list: 'request' | 'member', id: string) => who.page.locator(`li.${list}[data-participant="${id}"]`);
  /** The role badge's own text (the page shows it capitalised). */
  const roleOf = (who: BrowserPerson, id: string) => row(who, 'member', id).locator('.badge').textContent();

  beforeAll(async () => {
    ensureClientBuilt();
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    browser = await launchBrowser();
    ada = await personInBrowser(browser, server, 'Ada');
    bob = await personInBrowser(browser, server, 'Bob');
    const created = await appTool(server, ada.cookie, 'create_hub', { name: 'Field Station' });
    if (created.status !== 200) throw new Error(`create_hub failed: ${created.text}`);
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    await appTool(server, ada.cookie, 'start_thread', { hub: hub.slug, title: 'Sightings', body: 'Post yours here.' });
    // Bob asks and is let in through the tools, so the page starts with one member beside the owner.
    await appTool(server, bob.cookie, 'join_hub', { hub: hub.slug });
    await appTool(server, ada.cookie, 'moderate', { hub: hub.slug, action: 'let_in', who: bob.id });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lets in someone who asked, names them helper, then removes them', async () => {
    const visitor = await registerAgent(server, 'Visiting Bot');
    await rest(server, visitor.key, 'join_hub', { hub: hub.slug, note: 'I count birds.' });

    const page = ada.page;
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`/h/${hub.slug}`);
    const asking = row(ada, 'request', visitor.id);
    await expect.poll(() => asking.innerText()).toContain('Visiting Bot');
    expect(await asking.innerText()).toContain('I count birds.');

    await asking.getByRole('button', { name: 'Let in' }).click();
    const seated = row(ada, 'member', visitor.id);
    await expect.poll(() => roleOf(ada, visitor.id)).toBe('member');
    expect(await asking.count()).toBe(0);
    await expect.poll(async () => (await page.getByRole('status').allInnerTexts()).join(' ')).toContain('Visiting Bot is a member now.');
    expect((await rest(server, visitor.key, 'open_hub', { hub: hub.slug })).body.data.seat).toEqual({ role: 'member' });

    await seated.getByRole('button', { name: 'Make helper' }).click();
    await expect.poll(() => roleOf(ada, visitor.id)).toBe('helper');
    expect((await rest(server, visitor.key, 'open_hub', { hub: hub.slug })).body.data.seat).toEqual({ role: 'helper' });

    await seated.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => seated.count()).toBe(0);
    expect((await rest(server, visitor.key, 'open_hub', { hub: hub.slug })).status).toBe(404);
    expect(ada.errors).toEqual([]);
  });

  it('writes the Read me first, shown on the page and in the Markdown view', async () => {
    const page = ada.page;
    await page.goto(`/h/${hub.slug}`);
    await page.getByRole('textbox', { name: 'Read me first' }).fill('Count once per day.\nNo guesses.');
    await page.getByRole('button', { name: 'Save Read me first' }).click();
    await expect.poll(() => page.locator('.readme').innerText()).toContain('Count once per day.\nNo guesses.');
    const markdown = await request(`${server.url}/h/${hub.slug}.md`, { headers: { cookie: bob.cookie } });
    expect(markdown.text).toContain('## Read me first\n\n~~~markdown\nCount once per day.\nNo guesses.\n~~~');
    expect(ada.errors).toEqual([]);
  });

  it('publishes only after the preview, which changes nothing', async () => {
    const page = ada.page;
    const signedOut = () => request(`${server.url}/h/${hub.slug}.md`);
    await page.goto(`/h/${hub.slug}`);
    await page.getByRole('button', { name: 'Publish…' }).click();
    const preview = page.locator('.preview');
    await expect.poll(() => preview.innerText()).toContain('1 thread (1 post), 0 pads');
    expect(await preview.innerText()).toContain('2 members');
    expect(await preview.innerText()).toContain('Nothing has changed yet.');
    expect((await signedOut()).status).toBe(404);

    await page.getByRole('button', { name: 'Publish now' }).click();
    await expect.poll(() => page.locator('.audience').innerText()).toContain('This hub is public');
    expect((await signedOut()).status).toBe(200);
    expect(ada.errors).toEqual([]);
  });

  it('opens the published hub to guests and closes it again with the owner’s switch', async () => {
    const page = ada.page;
    const keyless = () =>
      request(`${server.url}/api/v1/tools/start_thread`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hub: hub.slug, title: 'A newcomer asks', body: 'Where do I count?' }),
      });
    await page.goto(`/h/${hub.slug}`);
    const guests = page.getByRole('checkbox', { name: /Take guests/ });
    await expect.poll(() => guests.isChecked()).toBe(false);
    expect((await keyless()).status).toBe(403);

    await guests.check();
    await expect.poll(async () => (await request(`${server.url}/h/${hub.slug}.md`)).text).toContain('/api/v1/tools/start_thread');
    expect((await keyless()).status).toBe(201);
    await page.reload();
    await expect.poll(() => page.getByRole('checkbox', { name: /Take guests/ }).isChecked()).toBe(true);

    await page.getByRole('checkbox', { name: /Take guests/ }).uncheck();
    await expect.poll(async () => (await keyless()).status).toBe(403);
    expect(ada.errors).toEqual([]);
  });

  it('lets a helper turn a request away and write the guide, but not publish or name helpers', async () => {
    const cleo = await personInBrowser(browser, server, 'Cleo');
    try {
      // A hub of its own, still private, with Cleo as helper and Bob as member.
      const watch = (await appTool(server, ada.cookie, 'create_hub', { name: 'Night Watch' })).body.data.slug as string;
      for (const who of [cleo, bob]) {
        await appTool(server, who.cookie, 'join_hub', { hub: watch });
        await appTool(server, ada.cookie, 'moderate', { hub: watch, action: 'let_in', who: who.id });
      }
      await appTool(server, ada.cookie, 'moderate', { hub: watch, action: 'name_helper', who: cleo.id });
      const pushy = await registerAgent(server, 'Pushy Bot');
      await rest(server, pushy.key, 'join_hub', { hub: watch });

      const page = cleo.page;
      await page.goto(`/h/${watch}`);
      const asking = row(cleo, 'request', pushy.id);
      await asking.getByRole('button', { name: 'Turn away' }).click();
      await expect.poll(() => asking.count()).toBe(0);
      expect((await appTool(server, ada.cookie, 'open_hub', { hub: watch })).body.data.request_count).toBe(0);
      expect(await row(cleo, 'member', pushy.id).count()).toBe(0);
      // Helpers remove members (Bob), never the owner, and name nobody.
      expect(await row(cleo, 'member', bob.id).getByRole('button', { name: 'Remove' }).count()).toBe(1);
      expect(await row(cleo, 'member', ada.id).getByRole('button').count()).toBe(0);
      expect(await page.getByRole('button', { name: /Make helper|Make member|Publish|Make private/ }).count()).toBe(0);
      expect(await page.getByRole('textbox', { name: 'Read me first' }).count()).toBe(1);
      expect(cleo.errors).toEqual([]);
    } finally {
      await cleo.context.close();
    }
  });

  it('shows a member who is in the hub, without the owner’s buttons', async () => {
    const page = bob.page;
    await page.goto(`/h/${hub.slug}`);
    await expect.poll(() => roleOf(bob, ada.id)).toBe('owner');
    expect(await roleOf(bob, bob.id)).toBe('member');
    expect(await page.getByRole('button', { name: /Remove|Make helper|Let in|Publish/ }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Hub settings' }).count()).toBe(0);
    expect(bob.errors).toEqual([]);
  });

  it('puts a pad in front beside the Read me first, which members and open_hub see; a member has no control', async () => {
    const guide = (await appTool(server, ada.cookie, 'create_pad', { hub: hub.slug, title: 'Field guide' })).body.data.pad_id as string;
    await appTool(server, ada.cookie, 'create_pad', { hub: hub.slug, title: 'Tally sheet' });
    const page = ada.page;
    await page.goto(`/h/${hub.slug}`);
    const front = page.getByTestId('front-pad');
    await expect.poll(() => front.innerText()).toContain('None yet.');
    await front.getByLabel('Pad to show here').selectOption({ label: 'Field guide' });
    await front.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => front.getByRole('link').innerText()).toBe('Field guide');
    expect(await front.getByRole('link').getAttribute('href')).toBe(`/p/${guide}`);
    await page.screenshot({ path: '/tmp/front-pad.png', fullPage: true });
    expect((await appTool(server, bob.cookie, 'open_hub', { hub: hub.slug })).body.data.front_pad).toMatchObject({ id: guide });

    await bob.page.goto(`/h/${hub.slug}`);
    const seen = bob.page.getByTestId('front-pad');
    await expect.poll(() => seen.getByRole('link').innerText()).toBe('Field guide');
    expect(await seen.getByRole('combobox').count()).toBe(0);

    await front.getByLabel('Change the front pad').selectOption({ label: 'No front pad' });
    await front.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => front.innerText()).toContain('None yet.');
    expect((await appTool(server, bob.cookie, 'open_hub', { hub: hub.slug })).body.data.front_pad).toBeUndefined();
    expect(ada.errors).toEqual([]);
    expect(bob.errors).toEqual([]);
  });
});
