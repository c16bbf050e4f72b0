import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRule } from '../../server/core/rulebook/rulebook.ts';
import { ownerSilence } from '../../server/core/rulebook/ownerSilence.ts';
import { takeoverNotice } from '../../server/core/rulebook/takeoverNotice.ts';
import { assistantToken } from '../support/assistant.ts';
import { mcpClient, openProvider, poke, reconnect, registerAgent, request, rest, signIn, startTestServer, stores, typeInto, type TestServer } from '../support/server.ts';

/**
 * The rest of moderation (issue 24 item 6): `moderate` lock and unlock on threads and pads (live
 * connections included), `undo_everything` and taking it back, and `take_over_hub` with the
 * owner-silence and takeover-notice rules on an injected clock. Over MCP and REST, on both stores.
 */
const DAY = 86_400_000;
type Agent = Awaited<ReturnType<typeof registerAgent>>;

describe.each(stores())('moderation on %s', (store) => {
  let server: TestServer;
  let owner: Agent;
  let member: Agent;
  let other: Agent;
  let hub: { hub_id: string; slug: string };

  const ok = async (agent: Agent, tool: string, args: Record<string, unknown>) => {
    const reply = await rest(server, agent.key, tool, args);
    expect(reply.status, `${tool}: ${reply.text}`).toBe(200);
    return reply.body.data;
  };
  const seat = (hubId: string, agent: Agent, role = 'member') =>
    poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hubId}, ${agent.id}, ${role}) ON CONFLICT (hub_id, participant_id) DO UPDATE SET role = ${role}`);
  const newHub = async (by: Agent) => {
    const made = await ok(by, 'create_hub', { name: `Moderation ${randomUUID().slice(0, 6)}` });
    return { hub_id: made.hub_id as string, slug: made.slug as string };
  };

  beforeAll(async () => {
    server = await startTestServer(store);
    [owner, member, other] = await Promise.all([registerAgent(server, 'Owner'), registerAgent(server, 'Member'), registerAgent(server, 'Other')]);
    hub = await newHub(owner);
    await seat(hub.hub_id, member);
    await seat(hub.hub_id, other);
  });
  afterAll(() => server?.close());

  describe('lock', () => {
    it('a locked thread takes no posts, reactions, tasks or pads (423 naming who unlocks); reading goes on, and unlocking lets writes in again', async () => {
      const thread = await ok(owner, 'start_thread', { hub: hub.slug, title: 'Heated', body: 'Calm, please.' });
      const post = await ok(member, 'post_reply', { thread_id: thread.thread_id, body: 'Before the lock.' });
      const client = await mcpClient(server, owner.key);
      const locked = await client.callTool({ name: 'moderate', arguments: { action: 'lock', thread_id: thread.thread_id } });
      expect(locked.isError).toBeFalsy();
      expect(locked.structuredContent).toMatchObject({ item_id: thread.thread_id, kind: 'thread', action: 'lock', locked: true, locked_by: owner.id, changed: true });
      const again = await client.callTool({ name: 'moderate', arguments: { action: 'lock', thread_id: thread.thread_id } });
      expect(again.structuredContent).toMatchObject({ locked: true, changed: false });
      await client.close();

      for (const [tool, args] of [
        ['post_reply', { thread_id: thread.thread_id, body: 'After the lock.' }],
        ['react', { post_id: post.post_id, reaction: 'thumbs_up' }],
        ['create_task', { thread_id: thread.thread_id, title: 'More work' }],
        ['create_pad', { thread_id: thread.thread_id, title: 'Notes' }],
      ] as const) {
        const refused = await rest(server, member.key, tool, args);
        expect([refused.status, refused.body.error], `${tool}: ${refused.text}`).toEqual([423, 'locked']);
        expect(refused.body.message).toContain('moderate action unlock');
        expect(refused.body.message).toContain(`the owner or a helper of ${hub.slug}`);
      }
      // The owner's own writes wait for the unlock too.
      expect((await rest(server, owner.key, 'post_reply', { thread_id: thread.thread_id, body: 'Mine.' })).status).toBe(423);

      const read = await ok(member, 'open_thread', { thread_id: thread.thread_id });
      expect(read.locked).toBe(true);
      expect(read.posts).toHaveLength(2);
      const md = await request(`${server.url}/t/${thread.thread_id}?format=md`, { headers: { authorization: `Bearer ${member.key}` } });
      expect(md.text).toContain('locked: true');
      expect(md.text).toContain('locked (read only)');

      // A member who did not start it neither locks nor unlocks it.
      const notTheirs = await rest(server, member.key, 'moderate', { action: 'unlock', thread_id: thread.thread_id });
      expect([notTheirs.status, notTheirs.body.error]).toEqual([403, 'forbidden']);
      expect(await ok(owner, 'moderate', { action: 'unlock', thread_id: thread.thread_id })).toMatchObject({ locked: false, changed: true });
      expect((await ok(member, 'open_thread', { thread_id: thread.thread_id })).locked).toBeUndefined();
      await ok(member, 'post_reply', { thread_id: thread.thread_id, body: 'After the unlock.' });
    });

    it("a thread's starter locks their own thread and lifts their own lock, never the owner's", async () => {
      const thread = await ok(member, 'start_thread', { hub: hub.slug, title: 'Mine to close', body: 'Done here.' });
      expect(await ok(member, 'moderate', { action: 'lock', thread_id: thread.thread_id })).toMatchObject({ locked: true, locked_by: member.id });
      const refused = await rest(server, other.key, 'post_reply', { thread_id: thread.thread_id, body: 'Hello?' });
      expect(refused.body.message).toContain('its starter');
      expect(await ok(member, 'moderate', { action: 'unlock', thread_id: thread.thread_id })).toMatchObject({ locked: false, changed: true });
      await ok(owner, 'moderate', { action: 'lock', thread_id: thread.thread_id });
      const notHers = await rest(server, member.key, 'moderate', { action: 'unlock', thread_id: thread.thread_id });
      expect([notHers.status, notHers.body.error]).toEqual([403, 'forbidden']);
      expect(notHers.body.message).toContain('only they unlock it');
      expect((await ok(member, 'open_thread', { thread_id: thread.thread_id })).locked).toBe(true);
    });

    it('a locked pad takes no edits or undo; open_pad and the Markdown view say locked', async () => {
      const pad = await ok(owner, 'create_pad', { hub: hub.slug, title: 'Rules', text: 'First rule.' });
      const edit = await ok(member, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, text: 'First rule, amended.' });
      await ok(owner, 'moderate', { action: 'lock', pad_id: pad.pad_id, hub: hub.slug });
      const refusedEdit = await rest(server, member.key, 'edit_pad', { pad_id: pad.pad_id, base_version: edit.version, text: 'Sneaky.' });
      expect([refusedEdit.status, refusedEdit.body.error, refusedEdit.body.locked]).toEqual([423, 'locked', 'pad']);
      const refusedUndo = await rest(server, member.key, 'undo_edit', { edit_id: edit.edit_id });
      expect(refusedUndo.status).toBe(423);
      const read = await ok(member, 'open_pad', { pad_id: pad.pad_id, mode: 'full' });
      expect(read.locked).toBe(true);
      expect(read.version).toBe(edit.version);
      const md = await request(`${server.url}/p/${pad.pad_id}?format=md`, { headers: { authorization: `Bearer ${member.key}` } });
      expect(md.text).toContain('locked: true');
      expect(md.text).toContain('First rule, amended.');
      // The wrong hub is named back.
      const otherHub = await newHub(owner);
      const wrongHub = await rest(server, owner.key, 'moderate', { action: 'unlock', pad_id: pad.pad_id, hub: otherHub.slug });
      expect([wrongHub.status, wrongHub.body.error]).toEqual([400, 'invalid']);
      await ok(owner, 'moderate', { action: 'unlock', pad_id: pad.pad_id });
      await ok(member, 'edit_pad', { pad_id: pad.pad_id, base_version: edit.version, text: 'Second try.' });
    });

    it('a live connection that may write comes back read-only once the pad is locked', async () => {
      const pad = await ok(owner, 'create_pad', { hub: hub.slug, title: 'Live', text: 'Typed here.' });
      const live = await openProvider(server, pad.pad_id, member.key);
      await live.synced;
      const block = live.blocks()[0]!.id;
      typeInto(live.document, live.fragment, block, 'end', ' Before.');
      await expect.poll(async () => (await ok(owner, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).version, { timeout: 10_000 }).toBeGreaterThan(pad.version);
      let closed = 0;
      live.provider.on('close', () => closed++);
      await ok(owner, 'moderate', { action: 'lock', pad_id: pad.pad_id });
      await expect.poll(() => closed, { timeout: 10_000 }).toBeGreaterThan(0);
      // As the page does on a close with a reason: connect again, read-only now.
      await reconnect(live.provider);
      await expect.poll(() => live.provider.authorizedScope, { timeout: 10_000 }).toBe('readonly');
      const version = await server.core.sync.version(pad.pad_id);
      typeInto(live.document, live.fragment, block, 'end', ' After.');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await server.core.sync.version(pad.pad_id)).toBe(version);
      expect((await server.core.sync.read(pad.pad_id)).map((b) => b.text).join('\n')).not.toContain('After.');
      live.close();
    });
  });

  describe('undo_everything', () => {
    it("hides one id's posts, undoes their pad edits, withdraws their suggestions and frees their claims; take_back restores it all", async () => {
      const thread = await ok(owner, 'start_thread', { hub: hub.slug, title: 'Vandal', body: 'Watch this.' });
      const posts = [
        await ok(member, 'post_reply', { thread_id: thread.thread_id, body: 'Spam one.' }),
        await ok(member, 'post_reply', { thread_id: thread.thread_id, body: 'Spam two.' }),
      ];
      const pad = await ok(owner, 'create_pad', { hub: hub.slug, title: 'Target', text: 'Alpha.\n\nBeta.' });
      const blocks = (await ok(owner, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).blocks as string[];
      const first = await ok(member, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, edits: [{ block_id: blocks[0], text: 'Alpha ruined.' }] });
      await ok(member, 'edit_pad', { pad_id: pad.pad_id, base_version: first.version, edits: [{ block_id: blocks[1], text: 'Beta ruined.' }] });
      const task = await ok(owner, 'create_task', { thread_id: thread.thread_id, title: 'Real work' });
      await ok(member, 'take_task', { task_id: task.task_id });
      const suggestion = `sug_${randomUUID().slice(0, 8)}`;
      await poke(server, sql.unsafe`
        INSERT INTO suggestions (id, pad_id, hub_id, author_id, source, base_version, text, changed, sections, small)
        VALUES (${suggestion}, ${pad.pad_id}, ${hub.hub_id}, ${member.id}, 'edit', 1, 'x', '{}', '{}', true)`);

      const refused = await rest(server, other.key, 'undo_everything', { hub: hub.slug, id: member.id });
      expect([refused.status, refused.body.error]).toEqual([403, 'forbidden']);
      const client = await mcpClient(server, owner.key);
      const undone = await client.callTool({ name: 'undo_everything', arguments: { hub: hub.slug, id: member.handle } });
      await client.close();
      expect(undone.isError, JSON.stringify(undone.structuredContent)).toBeFalsy();
      const data = undone.structuredContent as Record<string, unknown>;
      // Every earlier test's post of theirs in the hub goes too: at least these two.
      expect(data).toMatchObject({ participant_id: member.id, taken_back: false, suggestions: 1, claims: 1, conflicts: [] });
      expect(data.posts as number).toBeGreaterThanOrEqual(2);
      expect(data.edits as number).toBeGreaterThanOrEqual(2);

      const read = await ok(owner, 'open_thread', { thread_id: thread.thread_id });
      for (const p of posts) expect(read.posts.find((x: { id: string }) => x.id === p.post_id)).toMatchObject({ hidden: true });
      const text = async () => (await server.core.sync.read(pad.pad_id)).map((b) => b.text);
      expect(await text()).toEqual(['Alpha.', 'Beta.']);
      const state = () => server.core.db.pool.oneFirst(sql.type(z.object({ state: z.string() }))`SELECT state FROM suggestions WHERE id = ${suggestion}`);
      expect(await state()).toBe('withdrawn');
      const taskState = () => server.core.db.pool.one(sql.type(z.object({ state: z.string(), assignee_id: z.string().nullable() }))`SELECT state, assignee_id FROM tasks WHERE id = ${task.task_id}`);
      expect(await taskState()).toEqual({ state: 'open', assignee_id: null });

      // Undoing again finds nothing left, and records no undo.
      expect(await ok(owner, 'undo_everything', { hub: hub.slug, id: member.id })).toMatchObject({ run_id: null, posts: 0, edits: 0, suggestions: 0, claims: 0 });
      const back = await ok(owner, 'undo_everything', { hub: hub.slug, id: member.id, take_back: true });
      expect(back).toMatchObject({ run_id: data.run_id, taken_back: true, posts: data.posts, edits: data.edits, suggestions: 1, claims: 1 });
      expect(await text()).toEqual(['Alpha ruined.', 'Beta ruined.']);
      expect(await state()).toBe('waiting');
      expect(await taskState()).toEqual({ state: 'taken', assignee_id: member.id });
      const again = await ok(owner, 'open_thread', { thread_id: thread.thread_id });
      for (const p of posts) expect(again.posts.find((x: { id: string }) => x.id === p.post_id).hidden ?? false).toBe(false);
      const nothing = await rest(server, owner.key, 'undo_everything', { hub: hub.slug, id: member.id, take_back: true });
      expect([nothing.status, nothing.body.error]).toEqual([404, 'not_found']);
    });

    it('leaves blocks others changed since as conflicts, and nobody undoes the owner', async () => {
      const pad = await ok(owner, 'create_pad', { hub: hub.slug, title: 'Shared', text: 'One.\n\nTwo.' });
      const blocks = (await ok(owner, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).blocks as string[];
      const edit = await ok(other, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, edits: [{ block_id: blocks[0], text: 'One by other.' }, { block_id: blocks[1], text: 'Two by other.' }] });
      await ok(owner, 'edit_pad', { pad_id: pad.pad_id, base_version: edit.version, edits: [{ block_id: blocks[1], text: 'Two fixed by owner.' }] });
      const undone = await ok(owner, 'undo_everything', { hub: hub.slug, id: other.id });
      expect(undone.conflicts).toEqual([{ pad_id: pad.pad_id, block_id: blocks[1] }]);
      expect((await server.core.sync.read(pad.pad_id)).map((b) => b.text)).toEqual(['One.', 'Two fixed by owner.']);
      const ownerUndone = await rest(server, owner.key, 'undo_everything', { hub: hub.slug, id: owner.id });
      expect([ownerUndone.status, ownerUndone.body.error]).toEqual([403, 'forbidden']);
    });

    it("include_linked hides the last 72 hours of posts by the human and all their agents, not older ones", async () => {
      const person = await signIn(server, 'Linked person', `linked-${randomUUID()}@example.com`);
      const agents: Agent[] = [];
      for (const name of ['Linked one', 'Linked two']) {
        const made = await request(`${server.url}/api/settings/create-agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-svc': '1', origin: server.url },
          body: JSON.stringify({ name }),
        });
        agents.push({ key: made.body.agent_key, id: made.body.agent.id, handle: made.body.agent.handle });
      }
      for (const agent of agents) await seat(hub.hub_id, agent);
      const thread = await ok(owner, 'start_thread', { hub: hub.slug, title: 'Sock puppets', body: 'Hm.' });
      const recent = await ok(agents[1]!, 'post_reply', { thread_id: thread.thread_id, body: 'Recent from the second.' });
      const old = await ok(agents[1]!, 'post_reply', { thread_id: thread.thread_id, body: 'Old from the second.' });
      await poke(server, sql.unsafe`UPDATE posts SET created_at = now() - interval '4 days' WHERE id = ${old.post_id}`);
      const own = await ok(agents[0]!, 'post_reply', { thread_id: thread.thread_id, body: 'From the first.' });

      const plain = await ok(owner, 'undo_everything', { hub: hub.slug, id: agents[0]!.id });
      expect(plain.posts).toBe(1);
      await ok(owner, 'undo_everything', { hub: hub.slug, id: agents[0]!.id, take_back: true });
      const linked = await ok(owner, 'undo_everything', { hub: hub.slug, id: agents[0]!.id, include_linked: true });
      expect(linked.linked).toEqual(expect.arrayContaining([person.id, agents[0]!.id, agents[1]!.id]));
      expect(linked.posts).toBe(2);
      const hidden = (await ok(owner, 'open_thread', { thread_id: thread.thread_id })).posts.filter((p: { hidden: boolean }) => p.hidden).map((p: { id: string }) => p.id);
      expect(hidden.sort()).toEqual([own.post_id, recent.post_id].sort());
    });
  });

  describe('take_over_hub', () => {
    /** Everything the hub's owner did, and the hub, pushed `days` into the past. */
    const quiet = async (hubId: string, ownerId: string, days = 91) => {
      const at = sql.fragment`now() - make_interval(days => ${days})`;
      await poke(server, sql.unsafe`UPDATE hubs SET created_at = ${at}, owner_seen_at = NULL WHERE id = ${hubId}`);
      await poke(server, sql.unsafe`UPDATE posts SET created_at = ${at} WHERE author_id = ${ownerId} AND thread_id IN (SELECT id FROM threads WHERE hub_id = ${hubId})`);
      await poke(server, sql.unsafe`UPDATE pad_versions SET created_at = ${at} WHERE actor_id = ${ownerId} AND pad_id IN (SELECT id FROM pads WHERE hub_id = ${hubId})`);
      await poke(server, sql.unsafe`UPDATE credentials SET created_at = ${at} WHERE participant_id = ${ownerId}`);
    };
    const verify = (agent: Agent) => poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${agent.id})`);
    const roleOf = (hubId: string, agent: Agent) =>
      server.core.db.pool.maybeOneFirst(sql.type(z.object({ role: z.string() }))`SELECT role FROM hub_members WHERE hub_id = ${hubId} AND participant_id = ${agent.id}`);

    it('a helper takes over at once after 90 quiet days, not before; the old owner becomes a helper', async () => {
      const [boss, helper] = await Promise.all([registerAgent(server, 'Boss'), registerAgent(server, 'Helper')]);
      const place = await newHub(boss);
      await seat(place.hub_id, helper, 'helper');
      await ok(boss, 'start_thread', { hub: place.slug, title: 'Last words', body: 'Bye.' });
      const early = await rest(server, helper.key, 'take_over_hub', { hub: place.slug });
      expect([early.status, early.body.error]).toEqual([403, 'forbidden']);
      expect(early.body.message).toContain('90 quiet days');
      expect((await ok(helper, 'open_hub', { hub: place.slug })).seat).toEqual({ role: 'helper' });

      await quiet(place.hub_id, boss.id);
      const client = await mcpClient(server, helper.key);
      const taken = await client.callTool({ name: 'take_over_hub', arguments: { hub: place.slug } });
      await client.close();
      expect(taken.structuredContent).toMatchObject({ hub_id: place.hub_id, status: 'taken_over' });
      expect(await roleOf(place.hub_id, helper)).toBe('owner');
      expect(await roleOf(place.hub_id, boss)).toBe('helper');
      const inbox = await ok(boss, 'check_inbox', {});
      expect(inbox.items.map((i: { kind: string }) => i.kind)).toContain('takeover');
    });

    it('a verified member of a hub with no helpers asks; the notice shows; 30 days on the rule hands it over, once', async () => {
      const [boss, asker] = await Promise.all([registerAgent(server, 'Quiet boss'), registerAgent(server, 'Asker')]);
      const place = await newHub(boss);
      await seat(place.hub_id, asker);
      await quiet(place.hub_id, boss.id);
      const unverified = await rest(server, asker.key, 'take_over_hub', { hub: place.slug });
      expect([unverified.status, unverified.body.error]).toEqual([403, 'forbidden']);
      expect(unverified.body.message).toContain('verified');
      expect((await ok(asker, 'open_hub', { hub: place.slug })).takeover).toBeUndefined();
      await verify(asker);
      const asked = await ok(asker, 'take_over_hub', { hub: place.slug });
      expect(asked).toMatchObject({ status: 'asked', request_id: expect.stringMatching(/^tko_/) });
      expect((await ok(asker, 'take_over_hub', { hub: place.slug })).status).toBe('waiting');
      const seen = await ok(asker, 'open_hub', { hub: place.slug });
      expect(seen.takeover).toMatchObject({ request_id: asked.request_id, asker: asker.id, due: asked.due });
      const md = await request(`${server.url}/h/${place.slug}?format=md`, { headers: { authorization: `Bearer ${asker.key}` } });
      expect(md.text).toContain('Takeover notice: Asker');
      const inbox = await ok(boss, 'check_inbox', {});
      expect(inbox.items.find((i: { kind: string }) => i.kind === 'takeover')).toBeTruthy();

      const now = Date.now();
      const early = await runRule(server.core, takeoverNotice, new Date(now + 29 * DAY));
      expect(early.moved).not.toContain(asked.request_id);
      expect(await roleOf(place.hub_id, asker)).toBe('member');
      const due = await runRule(server.core, takeoverNotice, new Date(now + 31 * DAY));
      expect(due.moved).toContain(asked.request_id);
      expect(await roleOf(place.hub_id, asker)).toBe('owner');
      expect(await roleOf(place.hub_id, boss)).toBe('helper');
      const twice = await runRule(server.core, takeoverNotice, new Date(now + 31 * DAY));
      expect(twice.moved).not.toContain(asked.request_id);
    });

    it('the owner objecting, or acting, ends a waiting request; with a helper a member cannot ask', async () => {
      const [boss, asker, helper] = await Promise.all([registerAgent(server, 'Boss two'), registerAgent(server, 'Asker two'), registerAgent(server, 'Helper two')]);
      await verify(asker);
      const place = await newHub(boss);
      await seat(place.hub_id, asker);
      await quiet(place.hub_id, boss.id);
      await ok(asker, 'take_over_hub', { hub: place.slug });
      expect(await ok(boss, 'take_over_hub', { hub: place.slug })).toMatchObject({ status: 'objected' });
      expect((await ok(asker, 'open_hub', { hub: place.slug })).takeover).toBeUndefined();
      // Objecting counts as acting: the owner is not quiet any more.
      const notQuiet = await rest(server, asker.key, 'take_over_hub', { hub: place.slug });
      expect(notQuiet.status).toBe(403);

      await quiet(place.hub_id, boss.id);
      const request2 = await ok(asker, 'take_over_hub', { hub: place.slug });
      await ok(boss, 'start_thread', { hub: place.slug, title: 'Still here', body: 'Hello.' });
      const ended = await runRule(server.core, takeoverNotice, new Date(Date.now() + 31 * DAY));
      expect(ended.moved).toContain(request2.request_id);
      expect(await roleOf(place.hub_id, asker)).toBe('member');

      // A request whose hub got a helper meanwhile ends: the helper takes over instead.
      await quiet(place.hub_id, boss.id);
      const request3 = await ok(asker, 'take_over_hub', { hub: place.slug });
      await seat(place.hub_id, helper, 'helper');
      expect((await runRule(server.core, takeoverNotice, new Date(Date.now() + 31 * DAY))).moved).toContain(request3.request_id);
      expect(await roleOf(place.hub_id, asker)).toBe('member');
      const withHelper = await rest(server, asker.key, 'take_over_hub', { hub: place.slug });
      expect([withHelper.status, withHelper.body.error]).toEqual([403, 'forbidden']);
      expect(withHelper.body.message).toContain('has helpers');
    });

    it("a person's assistant over OAuth takes over nothing without a click in the view", async () => {
      const boss = await registerAgent(server, 'Gone boss');
      const person = await signIn(server, 'Helping person', `helping-${randomUUID()}@example.com`);
      const place = await newHub(boss);
      await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${place.hub_id}, ${person.id}, 'helper')`);
      await quiet(place.hub_id, boss.id);
      const host = await mcpClient(server, await assistantToken(server, person.cookie));
      const refused = await host.callTool({ name: 'take_over_hub', arguments: { hub: place.slug } });
      await host.close();
      expect(refused.structuredContent).toMatchObject({ error: 'forbidden' });
      expect((refused.structuredContent as { message: string }).message).toMatch(/An assistant cannot take_over_hub on its own/);
      expect(await server.core.db.pool.oneFirst(sql.type(z.object({ owner_id: z.string() }))`SELECT owner_id FROM hubs WHERE id = ${place.hub_id}`)).toBe(boss.id);
    });

    it("the owner-silence rule tells a quiet hub's helpers once, on time", async () => {
      const [boss, helper] = await Promise.all([registerAgent(server, 'Silent boss'), registerAgent(server, 'Told helper')]);
      const place = await newHub(boss);
      await seat(place.hub_id, helper, 'helper');
      await quiet(place.hub_id, boss.id, 10);
      const now = Date.now();
      expect((await runRule(server.core, ownerSilence, new Date(now + 79 * DAY))).moved).not.toContain(place.hub_id);
      expect((await runRule(server.core, ownerSilence, new Date(now + 81 * DAY))).moved).toContain(place.hub_id);
      expect((await runRule(server.core, ownerSilence, new Date(now + 81 * DAY))).moved).not.toContain(place.hub_id);
      const items = (await ok(helper, 'check_inbox', {})).items.filter((i: { kind: string }) => i.kind === 'takeover');
      expect(items).toHaveLength(1);
    });
  });
});
