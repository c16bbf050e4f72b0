import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { sql } from 'slonik';
import { appTool, mcpClient, poke, registerAgent, rest, type TestServer } from '../support/server.ts';
import type { BrowserPerson } from '../support/browser.ts';

/** What the pad browser suites (offline, history) share beyond test/support/browser.ts. */

export const addMember = (server: TestServer, hubId: string, participant: string, role = 'member') =>
  poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hubId}, ${participant}, ${role})`);

/**
 * A hub the owner made in the web app, with an agent as a member and its MCP client; `call` runs a
 * tool as the agent and throws on a refusal.
 */
export async function hubWithAgent(server: TestServer, owner: BrowserPerson, hubName: string, agentName: string) {
  const created = await appTool(server, owner.cookie, 'create_hub', { name: hubName });
  if (created.status !== 200) throw new Error(`create_hub failed: ${created.text}`);
  const hub = { id: created.body.data.hub_id as string, slug: created.body.data.slug as string };
  const agent = await registerAgent(server, agentName);
  await addMember(server, hub.id, agent.id);
  const mcp = await mcpClient(server, agent.key);
  const call = async (tool: string, args: Record<string, unknown>) => {
    const reply = await mcp.callTool({ name: tool, arguments: args });
    if (reply.isError) throw new Error(`${tool}: ${JSON.stringify(reply.structuredContent)}`);
    return reply.structuredContent as Record<string, any>;
  };
  return { hub, agent, mcp, call };
}

/** A hub owned by `owner`, with an agent as a member, and a pad the agent wrote there (so nothing in it is the owner's yet). */
export async function hubWithAgentPad(server: TestServer, owner: BrowserPerson, hubName: string, title: string, text: string) {
  const { hub, agent, mcp } = await hubWithAgent(server, owner, hubName, 'Scribe');
  const pad = await rest(server, agent.key, 'create_pad', { hub: hub.slug, title, text });
  if (pad.status !== 200) throw new Error(`create_pad failed: ${pad.text}`);
  return { hub, agent, padId: pad.body.data.pad_id as string, mcp };
}

/** The text of each top-level block of the page's pad, without other people's caret labels. */
export const paragraphs = (page: Page) =>
  page.locator('.pad-body').evaluate((body) =>
    [...body.children].map((block) => {
      const copy = block.cloneNode(true) as Element;
      for (const caret of copy.querySelectorAll('.collaboration-carets__caret')) caret.remove();
      return (copy.textContent ?? '').trim();
    }),
  );

/** Waits until the editor has taken in a selection moved by a key (ProseMirror reads it on selectionchange). */
export const selectionTaken = (page: Page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));

/** Types at the end of the paragraph that reads `text`. */
export async function typeAtEndOf(page: Page, text: string, typed: string) {
  await page.locator('.pad-body p', { hasText: text }).click();
  await page.keyboard.press('End');
  await selectionTaken(page);
  await page.keyboard.type(typed);
}

/** The pad page's sync status line. */
export const connection = (page: Page) => page.locator('.connection').innerText();

/** The page at desktop width and at 390 px, full length, as `<name>-desktop.png` and `<name>-phone.png` under SHOTS_DIR when it is set. */
export async function shoot(page: Page, name: string) {
  const dir = process.env.SHOTS_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  for (const [width, label] of [[1280, 'desktop'], [390, 'phone']] as const) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${dir}/${name}-${label}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
