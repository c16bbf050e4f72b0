import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRule } from '../../server/core/rulebook/rulebook.ts';
import { editWar } from '../../server/core/rulebook/editWar.ts';
import { mcpClient, poke, registerAgent, request, rest, signIn, startTestServer, stores, type Reachable, type TestServer } from '../support/server.ts';

/**
 * The Checked-hub rules of the rulebook (issue 24 items 4 and 5, SPEC part 3 "Edit war", part 8
 * "Rulebook timers"), each run with an injected clock: an edit war found from a pad's versions (3
 * reversals of one section by 2 or more humans within 72 hours), its mark read through MCP, REST and
 * the Markdown view, the hub's owner told once.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

type Agent = { key: string; id: string };

async function ok(server: Reachable, agent: Agent, tool: string, args: Record<string, unknown>) {
  const reply = await rest(server, agent.key, tool, args);
  expect(reply.status, `${tool}: ${reply.text}`).toBe(200);
  return reply.body.data;
}

/** Two agents one person added under Settings: one human behind both. */
async function twoAgentsOfOnePerson(server: Reachable, name: string): Promise<[Agent, Agent]> {
  const human = await signIn(server, `${name}'s person`, `person-${randomUUID()}@example.com`);
  const make = async (agent: string) => {
    const reply = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: human.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: agent }),
    });
    expect(reply.status, reply.text).toBe(201);
    return { key: reply.body.agent_key as string, id: reply.body.agent.id as string };
  };
  return [await make(`${name} one`), await make(`${name} two`)];
}

const WAR_MARK = 'proposals only (edit war)';

describe.each(stores())('Checked-hub rules on %s', (store) => {
  let server: TestServer;
  let owner: Agent;
  let alice: Agent;
  let bob: Agent;
  let carol: [Agent, Agent];
  let hub: { hub_id: string; slug: string };

  beforeAll(async () => {
    server = await startTestServer(store, { LOG_LEVEL: 'error' });
    [owner, alice, bob] = await Promise.all([registerAgent(server, 'Owner'), registerAgent(server, 'Alice'), registerAgent(server, 'Bob')]);
    carol = await twoAgentsOfOnePerson(server, 'Carol');
    hub = await ok(server, owner, 'create_hub', { name: `Wars ${randomUUID().slice(0, 6)}` });
    for (const agent of [alice, bob, ...carol]) await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${agent.id}, 'member')`);
  });
  afterAll(() => server?.close());

  /** A pad of two sections; answers its id and the block ids of the Risks section (heading, body). */
  async function twoSections() {
    const pad = await ok(server, owner, 'create_pad', { hub: hub.slug, title: 'Plan', text: '# Goals\n\nShip it.\n\n# Risks\n\nNone at all.' });
    const read = await ok(server, owner, 'open_pad', { pad_id: pad.pad_id, mode: 'full' });
    const [, , risks, body] = read.blocks as string[];
    return { padId: pad.pad_id as string, risks: risks!, body: body! };
  }

  /** Each writer in turn sets the Risks body to the next text: the first change, then reversals. */
  async function flip(padId: string, body: string, writers: Agent[]) {
    const texts = ['Many risks.', 'None at all.'];
    for (const [i, writer] of writers.entries()) {
      const { version } = await ok(server, writer, 'open_pad', { pad_id: padId });
      await ok(server, writer, 'edit_pad', { pad_id: padId, base_version: version, edits: [{ block_id: body, text: texts[i % 2] }] });
    }
  }

  const marks = (padId: string) =>
    server.core.db.pool.any(sql.type(z.object({ section_id: z.string(), kind: z.string(), parties: z.array(z.string()) }))`
      SELECT section_id, kind, parties FROM section_marks WHERE pad_id = ${padId}`);
  const humanOf = (agent: Agent) => server.core.db.pool.oneFirst(sql.type(z.object({ h: z.string() }))`SELECT linked_human AS h FROM participants WHERE id = ${agent.id}`);
  const warItems = async () => ((await ok(server, owner, 'check_inbox', { limit: 200 })).items as { kind: string; hub_id?: string }[]).filter((item) => item.kind === 'edit_war');

  it('edit war: 3 reversals of a section by 2 humans mark it proposals only, once, and tell the owner', async () => {
    const { padId, risks, body } = await twoSections();
    // Alice changes the section; Bob puts it back, Alice again, Bob again: 3 reversals by 2 humans.
    await flip(padId, body, [alice, bob, alice]);
    // Two reversals so far: no war.
    expect((await runRule(server.core, editWar, new Date())).moved).not.toContain(`${padId}#${risks}`);
    expect(await marks(padId)).toEqual([]);
    const before = (await warItems()).length;

    await ok(server, bob, 'edit_pad', { pad_id: padId, base_version: (await ok(server, bob, 'open_pad', { pad_id: padId })).version, edits: [{ block_id: body, text: 'None at all.' }] });
    const run = await runRule(server.core, editWar, new Date());
    expect(run.moved).toContain(`${padId}#${risks}`);
    expect(await marks(padId)).toEqual([{ section_id: risks, kind: 'edit_war', parties: expect.arrayContaining([await humanOf(alice), await humanOf(bob)]) }]);
    expect((await marks(padId))[0]!.parties).toHaveLength(2);
    expect(await warItems()).toHaveLength(before + 1);

    // Once: a second run at the same time moves nothing and tells nobody again.
    expect((await runRule(server.core, editWar, new Date())).moved).not.toContain(`${padId}#${risks}`);
    expect(await warItems()).toHaveLength(before + 1);

    // REST: the outline's Note column (an Open hub) and the data's mark; the Goals section has none.
    const outline = await rest(server, alice.key, 'open_pad', { pad_id: padId });
    expect(outline.body.data.sections).toEqual([expect.not.objectContaining({ mark: expect.anything() }), expect.objectContaining({ id: risks, mark: WAR_MARK })]);
    const text = outline.body.text;
    expect(text).toMatch(/\| Section \| Id \| Status \| Open threads \| Words \| Note \| Last writer \|/);
    expect(text).toContain(`| Risks | ${risks} | settled | 0 | 3 | ${WAR_MARK} |`);

    // MCP: the line above the section in sections mode, and the list after the whole pad.
    const client = await mcpClient(server, bob.key);
    try {
      const sections = await client.callTool({ name: 'open_pad', arguments: { pad_id: padId, mode: 'sections', sections: [risks] } });
      expect((sections.content as { text: string }[]).map((c) => c.text).join('\n')).toContain(`Note: ${WAR_MARK}`);
      const whole = await client.callTool({ name: 'open_pad', arguments: { pad_id: padId, mode: 'full' } });
      expect((whole.content as { text: string }[]).map((c) => c.text).join('\n')).toMatch(new RegExp(`## Section notes\\n\\n- Risks \\(section ${risks}\\): proposals only \\(edit war\\)`));
    } finally {
      await client.close();
    }

    // Markdown: the outline's column, the section's line, the whole pad's list.
    const md = (query: string) => request(`${server.url}/p/${padId}.md${query}`, { headers: { accept: 'text/markdown', authorization: `Bearer ${alice.key}` } });
    expect((await md('?outline=1')).text).toContain(`| Risks | ${risks} | settled | 0 | 3 | ${WAR_MARK} |`);
    expect((await md(`?section=${risks}`)).text).toContain(`Note: ${WAR_MARK}`);
    expect((await md('')).text).toContain(`## Section notes\n\n- Risks (section ${risks}): ${WAR_MARK}`);
  });

  it('edit war: while it stands edits to the section become suggestions; an outsider accepting one ends it for good', async () => {
    const { padId, body, risks } = await twoSections();
    await flip(padId, body, [alice, bob, alice, bob]);
    expect((await runRule(server.core, editWar, new Date())).moved).toContain(`${padId}#${risks}`);
    // Alice's edit of the section is kept as a suggestion, not written into the pad.
    const { version } = await ok(server, alice, 'open_pad', { pad_id: padId });
    const suggested = await ok(server, alice, 'edit_pad', { pad_id: padId, base_version: version, edits: [{ block_id: body, text: 'Some risks, listed below.' }] });
    expect(suggested).toMatchObject({ state: 'waiting' });
    expect((await ok(server, owner, 'open_pad', { pad_id: padId })).version).toBe(version);
    // The owner, outside the war, accepts it: the mark ends, and the reversals before it no longer count.
    expect(await ok(server, owner, 'verify', { id: suggested.suggestion_id, verdict: 'verify', note: 'A fair middle' })).toMatchObject({ state: 'accepted' });
    expect((await marks(padId)).map((m) => m.kind)).not.toContain('edit_war');
    expect((await runRule(server.core, editWar, new Date())).moved).not.toContain(`${padId}#${risks}`);
    expect((await marks(padId)).map((m) => m.kind)).not.toContain('edit_war');
    expect((await ok(server, owner, 'open_pad', { pad_id: padId })).sections.find((s: { id: string }) => s.id === risks).mark).toBe('checked by Owner: "A fair middle"');
  });

  it('edit war: one human flipping a section through two agents is no war, nor a pad with no marks', async () => {
    const { padId, body } = await twoSections();
    await flip(padId, body, [carol[0], carol[1], carol[0], carol[1]]);
    await runRule(server.core, editWar, new Date());
    expect(await marks(padId)).toEqual([]);
    const reversals = await server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM section_reversals WHERE pad_id = ${padId}`);
    expect(reversals).toBe(0);
    // No mark anywhere in the pad: the outline has no Note column and the whole pad no list.
    const outline = await rest(server, owner.key, 'open_pad', { pad_id: padId });
    expect(outline.body.text).not.toContain('| Note |');
    expect((await request(`${server.url}/p/${padId}.md`, { headers: { accept: 'text/markdown', authorization: `Bearer ${owner.key}` } })).text).not.toContain('## Section notes');
  });

  it('edit war: reversals older than 72 hours at the rule\'s clock start no war; within them they do', async () => {
    const { padId, body, risks } = await twoSections();
    await flip(padId, body, [alice, bob, alice, bob]);
    // 72 hours and a minute later, the same versions are outside the window.
    expect((await runRule(server.core, editWar, new Date(Date.now() + 72 * HOUR + MINUTE))).moved).not.toContain(`${padId}#${risks}`);
    expect(await marks(padId)).toEqual([]);
    // 71 hours later they are within it.
    expect((await runRule(server.core, editWar, new Date(Date.now() + 71 * HOUR))).moved).toContain(`${padId}#${risks}`);
    expect((await marks(padId)).map((m) => m.kind)).toEqual(['edit_war']);
  });
});
