import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRule } from '../../server/core/rulebook/rulebook.ts';
import { uncheckedMerge } from '../../server/core/rulebook/uncheckedMerge.ts';
import { durableStore, mcpClient, poke, registerAgent, request, rest, startTestServer, stores, type Reachable, type TestServer } from '../support/server.ts';

/**
 * Section marks in a Checked hub (issue 24 item 3, SPEC part 2 "Section marks", "Pad outline row"):
 * a checked suggestion marks its section `checked by <name>: "<note>"`, an edit after the check makes
 * it `changed since check (checked by <name> at v<N>)`, a small suggestion the 24-hour rule took in
 * makes it `unchecked (...)`; read through REST (the outline's Check column and data), MCP (the line
 * above a section, the list after the whole pad) and the Markdown views.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

type Agent = { key: string; id: string };

async function ok(server: Reachable, agent: Agent, tool: string, args: Record<string, unknown>) {
  const reply = await rest(server, agent.key, tool, args);
  expect(reply.status, `${tool}: ${reply.text}`).toBe(200);
  return reply.body.data;
}

const RISKS = 'None at all, as far as anyone here can tell today.';

describe.each(stores())('section marks on %s', (store) => {
  let server: TestServer;
  let owner: Agent;
  let member: Agent;
  let hub: { hub_id: string; slug: string };

  beforeAll(async () => {
    server = await startTestServer(store, { LOG_LEVEL: 'error' });
    [owner, member] = await Promise.all([registerAgent(server, 'Owner'), registerAgent(server, 'Member')]);
    hub = await ok(server, owner, 'create_hub', { name: `Checked ${randomUUID().slice(0, 6)}` });
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${member.id}, 'member')`);
    expect(await ok(server, owner, 'set_hub_mode', { hub: hub.slug, mode: 'checked' })).toMatchObject({ mode: 'checked' });
  });
  afterAll(() => server?.close());

  /** A pad of two sections the owner wrote; its id and the Risks section's heading and body blocks. */
  async function twoSections() {
    const pad = await ok(server, owner, 'create_pad', { hub: hub.slug, title: 'Plan', text: `# Goals\n\nShip it.\n\n# Risks\n\n${RISKS}` });
    const [, , risks, body] = (await ok(server, owner, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).blocks as string[];
    return { padId: pad.pad_id as string, risks: risks!, body: body! };
  }

  /** The member's edit of the Risks body, kept as a suggestion (a member's edit in a Checked hub). */
  async function suggest(padId: string, body: string, text: string) {
    const { version } = await ok(server, member, 'open_pad', { pad_id: padId });
    const suggested = await ok(server, member, 'edit_pad', { pad_id: padId, base_version: version, edits: [{ block_id: body, text }] });
    expect(suggested).toMatchObject({ state: 'waiting' });
    return suggested as { suggestion_id: string; small: boolean };
  }

  const outlineText = async (padId: string) => (await rest(server, owner.key, 'open_pad', { pad_id: padId })).body.text as string;
  const markOf = async (padId: string, section: string) =>
    ((await ok(server, owner, 'open_pad', { pad_id: padId })).sections as { id: string; mark?: string }[]).find((s) => s.id === section)?.mark;
  const md = (padId: string, query = '') => request(`${server.url}/p/${padId}.md${query}`, { headers: { accept: 'text/markdown', authorization: `Bearer ${member.key}` } });

  it('a checked suggestion marks its section checked, and an edit after the check reads changed since check', async () => {
    const { padId, risks, body } = await twoSections();
    // Before any mark the outline has no Check column.
    expect(await outlineText(padId)).not.toContain('| Check |');
    const { suggestion_id: id } = await suggest(padId, body, 'Two risks: time and money.');
    const verified = await ok(server, owner, 'verify', { id, verdict: 'verify', note: 'Matches the budget' });
    expect(verified).toMatchObject({ state: 'accepted' });
    const checkedAt = verified.version as number;

    const checked = 'checked by Owner: "Matches the budget"';
    expect(await markOf(padId, risks)).toBe(checked);
    const outline = await outlineText(padId);
    expect(outline).toContain('| Section | Id | Status | Open threads | Words | Check | Last writer |');
    expect(outline).toMatch(new RegExp(`\\| Risks \\| ${risks} \\| settled \\| 0 \\| \\d+ \\| ${checked.replace(/[()]/g, '\\$&')} \\|`));
    expect(outline).toMatch(/\| Goals \| \w+ \| settled \| 0 \| 2 \|  \|/);

    // MCP: the Check line above the section, the list after the whole pad.
    const client = await mcpClient(server, member.key);
    try {
      const section = await client.callTool({ name: 'open_pad', arguments: { pad_id: padId, mode: 'sections', sections: [risks] } });
      expect((section.content as { text: string }[]).map((c) => c.text).join('\n')).toContain(`Check: ${checked}`);
      const whole = await client.callTool({ name: 'open_pad', arguments: { pad_id: padId, mode: 'full' } });
      expect((whole.content as { text: string }[]).map((c) => c.text).join('\n')).toContain(`## Section checks\n\n- Risks (section ${risks}): ${checked}`);
    } finally {
      await client.close();
    }
    // Markdown: the Check column, line and list.
    const etag = (await md(padId)).headers.get('etag');
    expect((await md(padId, '?outline=1')).text).toContain(`| ${checked} |`);
    expect((await md(padId, `?section=${risks}`)).text).toContain(`Check: ${checked}`);
    expect((await md(padId)).text).toContain(`## Section checks\n\n- Risks (section ${risks}): ${checked}`);

    // The owner edits the section after the check: it reads changed since check, and the view's ETag moves.
    const { version } = await ok(server, owner, 'open_pad', { pad_id: padId });
    await ok(server, owner, 'edit_pad', { pad_id: padId, base_version: version, edits: [{ block_id: body, text: 'Two risks: time, money and scope.' }] });
    const changed = `changed since check (checked by Owner at v${checkedAt})`;
    expect(await markOf(padId, risks)).toBe(changed);
    expect((await md(padId, `?section=${risks}`)).text).toContain(`Check: ${changed}`);
    expect((await md(padId)).headers.get('etag')).not.toBe(etag);
  });

  it('the 24-hour rule takes in a small suggestion nobody checked, once, marking it unchecked; a large one keeps waiting', async () => {
    const { padId, risks, body } = await twoSections();
    const small = await suggest(padId, body, RISKS.replace('today', 'now'));
    expect(small.small).toBe(true);
    const other = await twoSections();
    const large = await suggest(other.padId, other.body, 'Everything about this plan is risky, from the schedule to the staffing to the money.');
    expect(large.small).toBe(false);
    // A small proposal in an Open hub (propose: true) is no Checked-hub suggestion: it waits for a person.
    const open = await ok(server, owner, 'create_hub', { name: `Open ${randomUUID().slice(0, 6)}` });
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${open.hub_id}, ${member.id}, 'member')`);
    const openPad = await ok(server, owner, 'create_pad', { hub: open.slug, title: 'Open plan', text: `# Risks\n\n${RISKS}` });
    const [, openBody] = (await ok(server, member, 'open_pad', { pad_id: openPad.pad_id, mode: 'full' })).blocks as string[];
    const proposal = await ok(server, member, 'edit_pad', { pad_id: openPad.pad_id, base_version: 1, propose: true, edits: [{ block_id: openBody, text: RISKS.replace('today', 'now') }] });
    expect(proposal).toMatchObject({ state: 'waiting', small: true });
    const state = (id: string) => server.core.db.pool.oneFirst(sql.type(z.object({ state: z.string() }))`SELECT state FROM suggestions WHERE id = ${id}`);

    // A minute short of 24 hours nothing moves.
    const made = Date.now();
    expect((await runRule(server.core, uncheckedMerge, new Date(made + 24 * HOUR - MINUTE))).moved).not.toContain(small.suggestion_id);
    expect(await state(small.suggestion_id)).toBe('waiting');

    // Two runs at once past 24 hours: it goes in once.
    const due = new Date(made + 24 * HOUR + MINUTE);
    const runs = await Promise.all([runRule(server.core, uncheckedMerge, due), runRule(server.core, uncheckedMerge, due)]);
    expect(runs.flatMap((run) => run.moved).filter((id) => id === small.suggestion_id)).toHaveLength(1);
    expect(runs.flatMap((run) => run.moved)).not.toContain(large.suggestion_id);
    expect(runs.flatMap((run) => run.moved)).not.toContain(proposal.suggestion_id);
    expect(await state(small.suggestion_id)).toBe('merged_unchecked');
    expect(await state(large.suggestion_id)).toBe('waiting');
    expect(await state(proposal.suggestion_id)).toBe('waiting');
    const versions = await server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM pad_versions WHERE pad_id = ${padId}`);
    expect(versions).toBe(2);
    expect((await runRule(server.core, uncheckedMerge, due)).moved).toEqual([]);

    const unchecked = 'unchecked (went in after 24 hours without a check)';
    expect(await markOf(padId, risks)).toBe(unchecked);
    expect((await ok(server, owner, 'open_pad', { pad_id: padId, mode: 'full' })).blocks).toHaveLength(4);
    expect((await md(padId, '?outline=1')).text).toContain(`| ${unchecked} |`);
    expect((await md(padId)).text).toContain(`## Section checks\n\n- Risks (section ${risks}): ${unchecked}`);
    expect((await md(padId)).text).toContain(RISKS.replace('today', 'now'));
  });
});

/** Two instances on one Postgres database running the 24-hour rule at once: a suggestion goes in once. */
describe.skipIf(!process.env.TEST_DATABASE_URL)('the unchecked merge across two instances', () => {
  const closers: (() => Promise<void>)[] = [];
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    const database = await durableStore('postgres');
    closers.push(() => database.drop());
    a = await startTestServer('postgres', { ...database.env, LOG_LEVEL: 'error' });
    closers.push(() => a.close());
    b = await startTestServer('postgres', { ...database.env, LOG_LEVEL: 'error' });
    closers.push(() => b.close());
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('both instances run the rule at the same moment: the suggestion goes in once, as one version', async () => {
    const [owner, member] = await Promise.all([registerAgent(a, 'Owner'), registerAgent(a, 'Member')]);
    const hub = await ok(a, owner, 'create_hub', { name: 'Two instances' });
    await poke(a, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${member.id}, 'member')`);
    await ok(a, owner, 'set_hub_mode', { hub: hub.slug, mode: 'checked' });
    const pad = await ok(a, owner, 'create_pad', { hub: hub.slug, title: 'Plan', text: `# Risks\n\n${RISKS}` });
    // The pad is live on both instances.
    for (const server of [a, b]) await ok(server, owner, 'open_pad', { pad_id: pad.pad_id, mode: 'full' });
    const [risks, body] = (await ok(b, member, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).blocks as string[];
    const suggested = await ok(b, member, 'edit_pad', { pad_id: pad.pad_id, base_version: 1, edits: [{ block_id: body, text: RISKS.replace('today', 'now') }] });
    expect(suggested).toMatchObject({ state: 'waiting', small: true });

    const due = new Date(Date.now() + 24 * HOUR + MINUTE);
    const runs = await Promise.all([runRule(a.core, uncheckedMerge, due), runRule(b.core, uncheckedMerge, due)]);
    expect(runs.flatMap((run) => run.moved)).toEqual([suggested.suggestion_id]);
    const versions = await a.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM pad_versions WHERE pad_id = ${pad.pad_id}`);
    expect(versions).toBe(2);
    for (const server of [a, b]) {
      const read = await ok(server, owner, 'open_pad', { pad_id: pad.pad_id });
      expect(read).toMatchObject({ version: 2 });
      expect(read.sections.find((s: { id: string }) => s.id === risks).mark).toBe('unchecked (went in after 24 hours without a check)');
    }
  });
});
