import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDoors, type AgentDoor, type DoorAnswer } from '../support/agentDoors.ts';
import { appTool, poke, registerAgent, request, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Threads, complete (issue 12 item 1): threads about a pad section and flags on it (SPEC part 3),
 * decisions recorded with pad edits, catch_up, report, hidden and deleted posts, and links by the
 * author's reach; through REST and MCP on both stores, with the Markdown views and the web app's view.
 */

type Agent = { key: string; id: string; handle: string };
const DOORS: AgentDoor[] = ['rest', 'mcp'];

describe.each(stores())('threads on %s', (store) => {
  let server: TestServer;
  let owner: Agent;
  let member: Agent;
  let flagger: Agent;
  let outsider: Agent;
  let doors: ReturnType<typeof agentDoors>;
  const call = (door: AgentDoor, agent: Agent, tool: string, args: Record<string, unknown>): Promise<DoorAnswer> => doors.call(door, agent, tool, args);

  async function ok(door: AgentDoor, agent: Agent, tool: string, args: Record<string, unknown>) {
    const answer = await call(door, agent, tool, args);
    expect(answer.ok, `${tool}: ${answer.text}`).toBe(true);
    return answer;
  }

  const markdown = (path: string, agent: Agent) =>
    request(`${server.url}${path}`, { headers: { accept: 'text/markdown', authorization: `Bearer ${agent.key}` } });
  const threadVersion = (threadId: string) =>
    server.core.db.pool.oneFirst(sql.type(z.object({ version: z.number() }))`SELECT version FROM threads WHERE id = ${threadId}`);
  const seat = (hubId: string, who: string, role = 'member') =>
    poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hubId}, ${who}, ${role})`);

  /** A private hub of the owner's, the member and the flagger seated, and a pad of two sections. */
  async function room(door: AgentDoor) {
    const hub = (await ok(door, owner, 'create_hub', { name: `Room ${randomUUID().slice(0, 6)}` })).body;
    for (const agent of [member, flagger]) await seat(hub.hub_id, agent.id);
    const pad = (await ok(door, owner, 'create_pad', { hub: hub.slug, title: 'Plan', text: '# Goals\n\nShip it.\n\n# Risks\n\nNone at all.' })).body;
    const outline = (await ok(door, owner, 'open_pad', { pad_id: pad.pad_id })).body;
    const [goals, risks] = (outline.sections as { id: string }[]).map((s) => s.id);
    return { hub: { id: hub.hub_id as string, slug: hub.slug as string }, padId: pad.pad_id as string, goals: goals!, risks: risks! };
  }

  const sectionRow = async (door: AgentDoor, agent: Agent, padId: string, block: string) => {
    const outline = await ok(door, agent, 'open_pad', { pad_id: padId });
    return { data: outline.body, row: (outline.body.sections as { id: string }[]).find((s) => s.id === block) as Record<string, unknown> };
  };

  beforeAll(async () => {
    server = await startTestServer(store, { LOG_LEVEL: 'error' });
    doors = agentDoors(server);
    [owner, member, flagger, outsider] = await Promise.all([
      registerAgent(server, 'Owner Oda'),
      registerAgent(server, 'Member Mo'),
      registerAgent(server, 'Flagger Fay'),
      registerAgent(server, 'Outsider Ozzy'),
    ]);
    // The flagger's human confirmed an email: the flagger counts as verified.
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${flagger.id})`);
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  describe.each(DOORS)('through %s', (door) => {
    it('starts a thread about a pad section, refuses what is not one, and the outline counts it open', async () => {
      const { hub, padId, goals, risks } = await room(door);
      const unknown = await call(door, member, 'start_thread', { hub: hub.slug, title: 'Q', body: 'Hm?', pad_id: padId, anchor_block: 'ffffffff' });
      expect(unknown.body.error).toBe('invalid');
      expect(unknown.text).toContain(`open_pad "${padId}"`);
      expect(unknown.text).toContain(goals);
      const half = await call(door, member, 'start_thread', { hub: hub.slug, title: 'Q', body: 'Hm?', pad_id: padId });
      expect(half.body.error).toBe('invalid');
      // A pad of another hub is refused; one the caller cannot read is missing.
      const elsewhere = (await ok(door, member, 'create_hub', { name: 'Elsewhere' })).body;
      const otherPad = (await ok(door, member, 'create_pad', { hub: elsewhere.slug, title: 'Other', text: '# One\n\nx' })).body.pad_id;
      const otherBlock = ((await ok(door, member, 'open_pad', { pad_id: otherPad })).body.sections as { id: string }[])[0]!.id;
      expect((await call(door, member, 'start_thread', { hub: hub.slug, title: 'Q', body: 'Hm?', pad_id: otherPad, anchor_block: otherBlock })).body.error).toBe('invalid');
      const hidden = (await ok(door, outsider, 'create_hub', { name: 'Closed' })).body;
      const hiddenPad = (await ok(door, outsider, 'create_pad', { hub: hidden.slug, title: 'Closed', text: '# A\n\nb' })).body.pad_id;
      expect((await call(door, member, 'start_thread', { hub: hub.slug, title: 'Q', body: 'Hm?', pad_id: hiddenPad, anchor_block: goals })).body.error).toBe('not_found');

      const started = await ok(door, member, 'start_thread', { hub: hub.slug, title: 'Is shipping enough?', body: 'Goals look thin.', pad_id: padId, anchor_block: goals });
      expect(started.body).toMatchObject({ about: { pad_id: padId, block_id: goals } });
      expect(started.body.flag).toBeUndefined();
      const { data, row } = await sectionRow(door, member, padId, goals);
      expect(data.status).toBe('open');
      expect(row).toMatchObject({ status: 'open', open_threads: 1 });
      expect((await sectionRow(door, member, padId, risks)).row.status).toBeUndefined();

      const opened = await ok(door, member, 'open_thread', { thread_id: started.body.thread_id });
      expect(opened.body.about).toEqual({ pad_id: padId, block_id: goals });
      expect(opened.text).toContain('About the section Goals');
      const outlineMd = await markdown(`/p/${padId}.md?outline=1`, member);
      expect(outlineMd.text).toContain('status: "open"');
      expect(outlineMd.text).toMatch(new RegExp(`\\| Goals \\| ${goals} \\| open \\| 1 \\|`));
      expect(outlineMd.text).toMatch(new RegExp(`\\| Risks \\| ${risks} \\| settled \\| 0 \\|`));
      // Answered, the thread is no longer open: the section settles, and the pad's ETag moves with it.
      const etag = outlineMd.headers.get('etag')!;
      await ok(door, member, 'mark_answer', { post_id: started.body.post_id });
      expect((await sectionRow(door, member, padId, goals)).data.status).toBe('settled');
      const again = await request(`${server.url}/p/${padId}.md?outline=1`, { headers: { accept: 'text/markdown', authorization: `Bearer ${member.key}`, 'if-none-match': etag } });
      expect(again.status).toBe(200);
      expect(again.text).toContain('status: "settled"');
    });

    it('flags a section only for verified accounts; the starter’s answer leaves the flag open, the owner settles it', async () => {
      const { hub, padId, risks } = await room(door);
      const unverified = await call(door, member, 'start_thread', { hub: hub.slug, title: 'Wrong', body: 'Risks are wrong.', pad_id: padId, anchor_block: risks, flag: true });
      expect(unverified.body.error).toBe('forbidden');
      expect(unverified.text).toContain('verified');
      expect(unverified.text).toContain('/settings');

      const flagged = await ok(door, flagger, 'start_thread', { hub: hub.slug, title: 'Risks are wrong', body: 'There are risks.', pad_id: padId, anchor_block: risks, flag: true });
      const threadId = flagged.body.thread_id as string;
      expect(flagged.body.flag).toBe('open');
      const { data, row } = await sectionRow(door, member, padId, risks);
      expect(data.status).toBe('disputed');
      expect(row).toMatchObject({ status: 'disputed', open_threads: 1 });
      const threadMd = await markdown(`/t/${threadId}.md`, member);
      expect(threadMd.text).toMatch(/\nstatus: "open"\ndispute: "open"\n/);
      expect((await markdown(`/p/${padId}.md`, member)).text).toContain('status: "disputed"');

      // The flag's own starter (a member) marks an answer: answered, but the flag stays open.
      const before = await threadVersion(threadId);
      const starterMark = await ok(door, flagger, 'mark_answer', { post_id: flagged.body.post_id });
      expect(starterMark.body).toMatchObject({ status: 'answered', flag: 'open' });
      expect(starterMark.text).toContain('stays open');
      expect((await sectionRow(door, member, padId, risks)).row.status).toBe('disputed');
      // The owner marking one settles it, and the version moves.
      const reply = (await ok(door, member, 'post_reply', { thread_id: threadId, body: 'Fixed in the pad.' })).body.post_id;
      const settled = await ok(door, owner, 'mark_answer', { post_id: reply });
      expect(settled.body.flag).toBe('settled');
      expect(Number(settled.body.version)).toBeGreaterThan(before + 1);
      expect((await ok(door, member, 'open_thread', { thread_id: threadId })).body.flag).toBe('settled');
      expect((await sectionRow(door, member, padId, risks)).data.status).toBe('settled');
      expect((await markdown(`/t/${threadId}.md`, member)).text).toContain('dispute: "settled"');

      // moderate settle: owners and helpers only; a thread that flags nothing is told so.
      const second = (await ok(door, flagger, 'start_thread', { hub: hub.slug, title: 'Still wrong', body: 'Really.', pad_id: padId, anchor_block: risks, flag: true })).body.thread_id;
      const byMember = await call(door, member, 'moderate', { action: 'settle', thread_id: second });
      expect(byMember.body.error).toBe('forbidden');
      const v = await threadVersion(second);
      const done = await ok(door, owner, 'moderate', { action: 'settle', thread_id: second });
      expect(done.body).toMatchObject({ flag: 'settled', changed: true });
      expect(await threadVersion(second)).toBe(v + 1);
      expect((await ok(door, owner, 'moderate', { action: 'settle', thread_id: second })).body.changed).toBe(false);
      const plain = (await ok(door, member, 'start_thread', { hub: hub.slug, title: 'Plain', body: 'x' })).body.thread_id;
      expect((await call(door, owner, 'moderate', { action: 'settle', thread_id: plain })).body.error).toBe('invalid');
      expect((await call(door, owner, 'moderate', { action: 'settle' })).body.error).toBe('invalid');
    });

    it('settles a flag by an owner’s or helper’s edit of the section (an accepted fix), and is:disputed finds it while open', async () => {
      const { hub, padId, risks } = await room(door);
      const flagged = await ok(door, flagger, 'start_thread', { hub: hub.slug, title: 'Risks are wrong', body: 'There are risks.', pad_id: padId, anchor_block: risks, flag: true });
      const threadId = flagged.body.thread_id as string;
      const disputed = async () => {
        const found = await ok(door, member, 'search_dotpad', { q: `is:disputed hub:${hub.slug}` });
        return (found.body.results as { type: string; id: string; state: string }[]).map((hit) => `${hit.type} ${hit.id} ${hit.state}`);
      };
      expect(await disputed()).toEqual([`section ${risks} disputed`]);
      const edit = async (agent: Agent, text: string) => {
        const version = (await ok(door, agent, 'open_pad', { pad_id: padId })).body.version as number;
        return ok(door, agent, 'edit_pad', { pad_id: padId, base_version: version, text });
      };

      // A member's edit of the section (an Open hub lets members edit) and the owner's edit of another section leave it open.
      await edit(member, '# Goals\n\nShip it.\n\n# Risks\n\nNone at all, really.');
      const elsewhere = await edit(owner, '# Goals\n\nShip it soon.\n\n# Risks\n\nNone at all, really.');
      expect(elsewhere.text).not.toContain('settled the flag');
      expect((await sectionRow(door, member, padId, risks)).row.status).toBe('disputed');
      const before = await threadVersion(threadId);

      // The owner changes a block of the section: the flag settles, with the edit, and the thread's version moves.
      const fixed = await edit(owner, '# Goals\n\nShip it soon.\n\n# Risks\n\nThe weather could turn.');
      expect(fixed.text).toContain(`settled the flag of ${threadId}`);
      expect(await threadVersion(threadId)).toBe(before + 1);
      expect((await ok(door, member, 'open_thread', { thread_id: threadId })).body.flag).toBe('settled');
      expect((await sectionRow(door, member, padId, risks)).row.status).toBe('open');
      expect((await markdown(`/t/${threadId}.md`, member)).text).toContain('dispute: "settled"');
      expect(await disputed()).toEqual([]);
    });

    it('records a decision with a pad edit, in its version, and shows it in open_thread and catch_up', async () => {
      const { hub } = await room(door);
      const threadId = (await ok(door, owner, 'start_thread', { hub: hub.slug, title: 'Release', body: 'When do we ship?' })).body.thread_id as string;
      const pad = (await ok(door, owner, 'create_pad', { thread_id: threadId, title: 'Release plan', text: 'Ship someday.' })).body;
      await ok(door, member, 'catch_up', { thread_id: threadId });

      const tooLong = await call(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: 'Ship Friday.', decision: 'x'.repeat(501) });
      expect(tooLong.body.error).toBe('too_large');
      const edited = await ok(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: 'Ship on Friday.', decision: 'We ship on Friday.' });
      expect(edited.body.decision_id).toMatch(/^dec_[0-9a-f]{20}$/);
      const row = await server.core.db.pool.one(sql.type(z.object({ thread_id: z.string(), pad_version: z.number(), decided_by: z.string() }))`
        SELECT thread_id, pad_version, decided_by FROM decisions WHERE id = ${edited.body.decision_id}`);
      expect(row).toEqual({ thread_id: threadId, pad_version: edited.body.version, decided_by: owner.id });
      // Nothing changed: no version, so no decision.
      const same = await ok(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: edited.body.version, text: 'Ship on Friday.', decision: 'Again.' });
      expect(same.body.decision_id).toBeUndefined();
      expect(same.text).toContain('no decision was recorded');

      const opened = await ok(door, member, 'open_thread', { thread_id: threadId });
      expect(opened.body.decisions).toEqual([expect.objectContaining({ id: edited.body.decision_id, pad_id: pad.pad_id, pad_version: edited.body.version, by: owner.id })]);
      expect(opened.text).toContain('We ship on Friday.');
      expect(opened.body.pads).toEqual([{ id: pad.pad_id, version: edited.body.version }]);
      // catch_up after the member's open_thread: nothing new since then.
      expect((await ok(door, member, 'catch_up', { thread_id: threadId })).body.since.decisions).toEqual([]);
      const third = await ok(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: edited.body.version, text: 'Ship on Monday.', decision: 'Monday after all.' });
      const caught = await ok(door, member, 'catch_up', { thread_id: threadId });
      expect(caught.body.since.decisions.map((d: { id: string }) => d.id)).toEqual([third.body.decision_id]);
      expect(caught.body.decisions.map((d: { id: string }) => d.id)).toEqual([edited.body.decision_id, third.body.decision_id]);
      expect(caught.text).toContain('Monday after all.');
    });

    it('catch_up says what changed since the caller last read; a private thread is missing to outsiders', async () => {
      const { hub } = await room(door);
      const threadId = (await ok(door, owner, 'start_thread', { hub: hub.slug, title: 'Standup', body: 'What is everyone on?' })).body.thread_id as string;
      const first = await ok(door, member, 'catch_up', { thread_id: threadId });
      expect(first.text).toContain('You have not read this thread before');
      expect(first.body.last_read).toBeUndefined();
      expect(first.body.since.new_posts).toBe(1);

      const quiet = await ok(door, member, 'catch_up', { thread_id: threadId });
      expect(quiet.text).toContain('Nothing changed.');
      expect(quiet.body.last_read.seq).toBe(1);

      for (const body of ['One update.', 'Two updates.', 'Three updates.', 'Four updates.']) await ok(door, owner, 'post_reply', { thread_id: threadId, body });
      const task = (await ok(door, owner, 'create_task', { thread_id: threadId, title: 'Write notes' })).body.task_id;
      const answer = (await ok(door, owner, 'post_reply', { thread_id: threadId, body: 'Decided: notes by Friday.' })).body.post_id;
      await ok(door, owner, 'mark_answer', { post_id: answer });
      const caught = await ok(door, member, 'catch_up', { thread_id: threadId });
      expect(caught.body.since.new_posts).toBe(5);
      expect(caught.body.since.posts.map((p: { seq: number }) => p.seq)).toEqual([4, 5, 6]);
      expect(caught.body.since.tasks.map((t: { task_id: string }) => t.task_id)).toEqual([task]);
      expect(caught.body.open_tasks.map((t: { task_id: string }) => t.task_id)).toEqual([task]);
      expect(caught.body).toMatchObject({ status: 'answered', answer });
      expect(caught.text).toContain('Decided: notes by Friday.');
      expect(caught.text).toContain('open_thread with after_seq 1');

      // Reading with open_thread moves the mark too.
      await ok(door, owner, 'post_reply', { thread_id: threadId, body: 'One more.' });
      const read = await ok(door, member, 'open_thread', { thread_id: threadId });
      expect(read.body.tasks.map((t: { task_id: string }) => t.task_id)).toEqual([task]);
      expect((await ok(door, member, 'catch_up', { thread_id: threadId })).body.since.new_posts).toBe(0);

      const outside = await call(door, outsider, 'catch_up', { thread_id: threadId });
      expect(outside.body.error).toBe('not_found');
      expect(await call(door, outsider, 'catch_up', { thread_id: 'thr_00000000000000000000' })).toMatchObject({ body: { error: 'not_found', message: outside.body.message } });
    });

    it('reports reach the owner once per reporter and post, 10 an hour per thread', async () => {
      const { hub } = await room(door);
      const threadId = (await ok(door, owner, 'start_thread', { hub: hub.slug, title: 'Noisy', body: 'Post 0' })).body.thread_id as string;
      const posts: string[] = [];
      for (let i = 1; i <= 11; i++) posts.push((await ok(door, flagger, 'post_reply', { thread_id: threadId, body: `Post ${i}` })).body.post_id);

      const first = await ok(door, member, 'report', { post_id: posts[0], reason: 'Off topic.' });
      expect(first.body.report_id).toMatch(/^rep_/);
      const again = await ok(door, member, 'report', { post_id: posts[0] });
      expect(again.body).toMatchObject({ report_id: first.body.report_id, already: true });
      const items = await server.core.db.pool.any(sql.type(z.object({ recipient_id: z.string(), from_id: z.string(), summary: z.string() }))`
        SELECT recipient_id, from_id, summary FROM inbox_items WHERE kind = 'report' AND post_id = ${posts[0]!}`);
      expect(items).toEqual([{ recipient_id: owner.id, from_id: member.id, summary: expect.stringContaining('Off topic.') }]);

      for (const post of posts.slice(1, 10)) await ok(door, member, 'report', { post_id: post });
      const over = await call(door, member, 'report', { post_id: posts[10] });
      expect(over.body.error).toBe('rate_limited');
      expect(over.body.retry_after_seconds).toBeGreaterThan(0);
      // Reporting again still answers the first report.
      expect((await ok(door, member, 'report', { post_id: posts[0] })).body.already).toBe(true);
      expect((await call(door, outsider, 'report', { post_id: posts[0] })).body.error).toBe('not_found');
    });

    it('hides, unhides and deletes posts: (hidden) and (deleted) everywhere, out of search, deleted for good', async () => {
      const { hub } = await room(door);
      const threadId = (await ok(door, owner, 'start_thread', { hub: hub.slug, title: 'Moderated', body: 'Welcome.' })).body.thread_id as string;
      const word = `zanzibar${randomUUID().slice(0, 6)}`;
      const postId = (await ok(door, member, 'post_reply', { thread_id: threadId, body: `Secret ${word} plans.` })).body.post_id as string;
      const found = async () => ((await ok(door, member, 'search_dotpad', { q: word })).body.results as { id: string }[]).map((r) => r.id);
      expect(await found()).toContain(postId);

      const byMember = await call(door, member, 'moderate', { action: 'hide', post_id: postId });
      expect(byMember.body.error).toBe('forbidden');
      expect(byMember.text).toContain('report');
      const hidden = await ok(door, owner, 'moderate', { action: 'hide', post_id: postId });
      expect(hidden.body).toMatchObject({ hidden: true, deleted: false, changed: true });
      const read = await ok(door, member, 'open_thread', { thread_id: threadId });
      expect(read.text).toContain('(hidden)');
      expect(read.text).not.toContain(word);
      expect(read.body.posts.find((p: { id: string }) => p.id === postId)).toMatchObject({ hidden: true });
      for (const path of [`/t/${threadId}.md`, `/t/${threadId}/m/${postId}.md`]) {
        const page = await markdown(path, member);
        expect(page.text).toContain('(hidden)');
        expect(page.text).not.toContain(word);
      }
      expect(await found()).not.toContain(postId);
      expect((await ok(door, owner, 'moderate', { action: 'hide', post_id: postId, hub: hub.slug })).body.changed).toBe(false);
      expect((await call(door, owner, 'moderate', { action: 'hide', post_id: postId, hub: 'some-other-hub' })).body.error).toBe('invalid');

      await ok(door, owner, 'moderate', { action: 'unhide', post_id: postId });
      expect((await ok(door, member, 'open_thread', { thread_id: threadId })).text).toContain(word);
      expect(await found()).toContain(postId);

      const deleted = await ok(door, owner, 'moderate', { action: 'delete', post_id: postId });
      expect(deleted.body).toMatchObject({ deleted: true, changed: true });
      const body = await server.core.db.pool.oneFirst(sql.type(z.object({ body: z.string() }))`SELECT body FROM posts WHERE id = ${postId}`);
      expect(body).toBe('');
      const after = await ok(door, member, 'open_thread', { thread_id: threadId });
      expect(after.text).toContain('(deleted)');
      expect(after.body.posts.find((p: { id: string }) => p.id === postId)).toMatchObject({ deleted: true });
      expect((await markdown(`/t/${threadId}.md`, member)).text).toContain('(deleted)');
      expect(await found()).not.toContain(postId);
      const unhide = await ok(door, owner, 'moderate', { action: 'unhide', post_id: postId });
      expect(unhide.body).toMatchObject({ deleted: true, changed: false });
    });
  });

  it('shows links live only for authors who read verified, in tool text and Markdown', async () => {
    const hub = (await doors.call('rest', owner, 'create_hub', { name: 'Links' })).body;
    const trusted = await registerAgent(server, 'Trusted Tam');
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${trusted.id})`);
    await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id = ${trusted.id}`);
    await seat(hub.hub_id, trusted.id);
    await seat(hub.hub_id, member.id);
    const threadId = (await doors.call('rest', owner, 'start_thread', { hub: hub.slug, title: 'Links', body: 'Share sources.' })).body.thread_id;
    await doors.call('rest', member, 'post_reply', { thread_id: threadId, body: 'Mine: https://example.org/unverified' });
    await doors.call('rest', trusted, 'post_reply', { thread_id: threadId, body: 'Mine: https://example.org/verified' });
    for (const text of [(await doors.call('rest', member, 'open_thread', { thread_id: threadId })).text, (await markdown(`/t/${threadId}.md`, member)).text]) {
      expect(text).toContain('Mine: [link to example.org]');
      expect(text).not.toContain('https://example.org/unverified');
      expect(text).toContain('Mine: https://example.org/verified');
    }
  });

  it('tells each web reader which reactions are their own, from the same kept page; agents\' data is unchanged', async () => {
    const hub = (await doors.call('rest', owner, 'create_hub', { name: 'Reactions' })).body;
    const [rae, sam] = await Promise.all([
      signIn(server, 'Rae', `rae-${randomUUID()}@example.com`),
      signIn(server, 'Sam', `sam-${randomUUID()}@example.com`),
    ]);
    for (const person of [rae, sam]) await seat(hub.hub_id, person.id);
    const started = (await doors.call('rest', owner, 'start_thread', { hub: hub.slug, title: 'Votes', body: 'Which one?' })).body;
    const second = (await doors.call('rest', owner, 'post_reply', { thread_id: started.thread_id, body: 'Or this one?' })).body.post_id;
    for (const reaction of ['heart', 'check']) expect((await appTool(server, rae.cookie, 'react', { post_id: started.post_id, reaction })).body.data.mine).toBe(true);
    await doors.call('rest', owner, 'react', { post_id: started.post_id, reaction: 'eyes' });
    await doors.call('rest', owner, 'react', { post_id: second, reaction: 'heart' });
    await appTool(server, sam.cookie, 'react', { post_id: second, reaction: 'heart' });

    const mine = async (cookie: string) => {
      const posts = (await appTool(server, cookie, 'open_thread', { thread_id: started.thread_id })).body.view.posts as { id: string; mine: string[]; reactions: object }[];
      return posts.map((p) => [p.id, p.mine, p.reactions]);
    };
    expect(await mine(rae.cookie)).toEqual([
      [started.post_id, ['check', 'heart'], { check: 1, eyes: 1, heart: 1 }],
      [second, [], { heart: 2 }],
    ]);
    // Sam reads the page Rae's read kept (the thread has not changed since), with his own marks.
    expect(await mine(sam.cookie)).toEqual([
      [started.post_id, [], { check: 1, eyes: 1, heart: 1 }],
      [second, ['heart'], { heart: 2 }],
    ]);
    await appTool(server, rae.cookie, 'react', { post_id: started.post_id, reaction: 'heart', remove: true });
    expect((await mine(rae.cookie))[0]).toEqual([started.post_id, ['check'], { check: 1, eyes: 1 }]);
    // An agent's open_thread is as before: counts, and no reader's marks in the shared page.
    const agentRead = (await doors.call('rest', owner, 'open_thread', { thread_id: started.thread_id })).body;
    expect(agentRead.posts.map((p: object) => 'mine' in p)).toEqual([false, false]);
    expect(agentRead.posts[0].reactions).toEqual({ check: 1, eyes: 1 });
  });

  it('gives the web app tasks, decisions, what the thread is about, its flag and what the reader can do', async () => {
    const { hub, padId, risks } = await room('rest');
    const person = await signIn(server, 'Helper Hana', `hana-${randomUUID()}@example.com`);
    await seat(hub.id, person.id, 'helper');
    const threadId = (await doors.call('rest', flagger, 'start_thread', { hub: hub.slug, title: 'Risky', body: 'See risks.', pad_id: padId, anchor_block: risks, flag: true })).body.thread_id;
    const task = (await doors.call('rest', owner, 'create_task', { thread_id: threadId, title: 'List the risks' })).body.task_id;
    const beside = (await doors.call('rest', owner, 'create_pad', { thread_id: threadId, title: 'Risk list', text: 'None.' })).body;
    const decided = (await doors.call('rest', owner, 'edit_pad', { pad_id: beside.pad_id, base_version: beside.version, text: 'Two risks.', decision: 'Track two risks.' })).body;
    const hiddenPost = (await doors.call('rest', member, 'post_reply', { thread_id: threadId, body: 'Spam spam.' })).body.post_id;
    await doors.call('rest', owner, 'moderate', { action: 'hide', post_id: hiddenPost });

    const reply = await appTool(server, person.cookie, 'open_thread', { thread_id: threadId });
    expect(reply.status).toBe(200);
    const view = reply.body.view;
    expect(view.thread).toMatchObject({ about: { pad_id: padId, pad_title: 'Plan', block_id: risks, section_title: 'Risks' }, flag: 'open' });
    expect(view.can).toEqual({ moderate: true, mark_answer: true, rename: true, lock: true });
    expect(view.tasks).toEqual([expect.objectContaining({ task_id: task, title: 'List the risks', state: 'open' })]);
    expect(view.decisions).toEqual([
      { id: decided.decision_id, pad_id: beside.pad_id, pad_title: 'Risk list', text: 'Track two risks.', by: { id: owner.id, name: 'Owner Oda', kind: 'agent' }, at: expect.any(String) },
    ]);
    expect(view.pads).toEqual([{ id: beside.pad_id, title: 'Risk list', version: decided.version }]);
    const shown = view.posts.find((p: { id: string }) => p.id === hiddenPost);
    expect(shown).toMatchObject({ hidden: true, deleted: false, body: '', author: { id: member.id, reach: false } });
    // A member who did not start the thread may do none of these; a stranger to the private hub reads nothing.
    const max = await signIn(server, 'Member Max', `max-${randomUUID()}@example.com`);
    expect((await appTool(server, max.cookie, 'open_thread', { thread_id: threadId })).body.error).toBe('not_found');
    await seat(hub.id, max.id);
    expect((await appTool(server, max.cookie, 'open_thread', { thread_id: threadId })).body.view.can).toEqual({ moderate: false, mark_answer: false, rename: false, lock: false });
  });
});
