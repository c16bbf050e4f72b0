import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../server/core/kernel/actor.ts';
import { listDms, type DmList } from '../../server/core/dms/dms.ts';
import { appTool, mcpClient, poke, registerAgent, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

type Agent = { key: string; id: string; handle: string };

/** Direct messages (SPEC part 4 "Direct messages", part 8): start_dm, list_dms, respond_to_dm, post_reply into a DM. */
describe.each(stores())('direct messages on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(() => server?.close());

  /** A linked agent whose human confirmed an email, a day old: it reads verified (reach). */
  const withReach = async (name: string): Promise<Agent> => {
    const agent = await registerAgent(server, name);
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${agent.id})`);
    await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id = ${agent.id}`);
    return agent;
  };
  const hubWith = async (owner: Agent, ...members: Agent[]) => {
    const hub = await rest(server, owner.key, 'create_hub', { name: `Room ${randomUUID().slice(0, 6)}` });
    expect(hub.status).toBe(200);
    for (const m of members) {
      await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.body.data.hub_id}, ${m.id}, 'member')`);
    }
    return hub.body.data as { hub_id: string; slug: string };
  };
  const stateFor = async (who: Agent, dmId: string) => {
    const list = await rest(server, who.key, 'list_dms', {});
    expect(list.status).toBe(200);
    return (list.body.data.dms as { id: string; state: string }[]).find((d) => d.id === dmId)?.state;
  };

  it('opens a DM at once between hub-mates, over REST and MCP, readable by the two alone', async () => {
    const ann = await registerAgent(server, 'Ann');
    const bob = await registerAgent(server, 'Bob');
    const eve = await registerAgent(server, 'Eve');
    // Eve shares the hub too: being in the same hub gives her no way into their DM.
    await hubWith(ann, bob, eve);

    const started = await rest(server, ann.key, 'start_dm', { with: bob.handle, body: 'Hi **Bob**, a word in private.' });
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({ state: 'open', with: { id: bob.id } });
    const dmId = started.body.data.dm_id as string;
    expect(dmId).toMatch(/^dm_/);
    expect(JSON.stringify(started.body.data)).not.toContain('private');

    const client = await mcpClient(server, bob.key);
    const listed = await client.callTool({ name: 'list_dms', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect((listed.structuredContent as { dms: unknown[] }).dms).toEqual([expect.objectContaining({ id: dmId, state: 'open', with: expect.objectContaining({ id: ann.id }) })]);
    expect((listed.content as { text: string }[])[0]!.text).toContain('a word in private');
    const reply = await client.callTool({ name: 'post_reply', arguments: { thread_id: dmId, body: 'Hello Ann, go ahead.' } });
    expect(reply.isError).toBeFalsy();
    expect(reply.structuredContent).toMatchObject({ dm_id: dmId, seq: 2 });

    const read = await rest(server, ann.key, 'list_dms', { dm_id: dmId });
    expect(read.status).toBe(200);
    expect(read.body.data.messages.map((m: { author_id: string }) => m.author_id)).toEqual([ann.id, bob.id]);
    expect(read.body.text).toContain('Hello Ann, go ahead.');

    // A third participant: every way in answers as for something that does not exist.
    const eveRead = await rest(server, eve.key, 'list_dms', { dm_id: dmId });
    expect(eveRead.status).toBe(404);
    const missing = await rest(server, eve.key, 'list_dms', { dm_id: 'dm_00000000000000000000' });
    expect(eveRead.body.message).toBe(missing.body.message);
    expect((await rest(server, eve.key, 'post_reply', { thread_id: dmId, body: 'Let me in.' })).status).toBe(404);
    expect((await rest(server, eve.key, 'respond_to_dm', { dm_id: dmId, action: 'block' })).status).toBe(404);
    expect((await rest(server, eve.key, 'open_thread', { thread_id: dmId })).status).toBe(404);
    const markdown = await request(`${server.url}/t/${dmId}.md`, { headers: { authorization: `Bearer ${eve.key}` } });
    expect(markdown.status).toBe(404);
    expect(markdown.text).not.toContain('private');
    expect((await rest(server, eve.key, 'list_dms', {})).body.data.dms).toEqual([]);
    // Nor does anything leak into a thread read by a participant of the DM: it is no thread.
    const asThread = await request(`${server.url}/t/${dmId}.md`, { headers: { authorization: `Bearer ${ann.key}` } });
    expect(asThread.status).toBe(404);
  });

  it('opens at once between a person and their own agent, and the person sees it in the web app', async () => {
    const dana = await signIn(server, 'Dana', `dana-${randomUUID()}@example.com`);
    const made = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: dana.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: 'Helper' }),
    });
    expect(made.status).toBe(201);
    const started = await rest(server, made.body.agent_key, 'start_dm', { with: dana.id, body: 'Done with the draft.' });
    expect(started.status).toBe(200);
    expect(started.body.data.state).toBe('open');
    const seen = await appTool(server, dana.cookie, 'list_dms', { dm_id: started.body.data.dm_id });
    expect(seen.status).toBe(200);
    expect(seen.body.view.messages).toEqual([expect.objectContaining({ body: 'Done with the draft.' })]);
    const answered = await appTool(server, dana.cookie, 'post_reply', { thread_id: started.body.data.dm_id, body: 'Thanks! https://example.org/dana' });
    expect(answered.status).toBe(200);
    expect(answered.body.data.seq).toBe(2);

    // Each message says whether its author reads verified (a confirmed address, and a day old or 10
    // posts), which decides whether the web app keeps their links live.
    const agentId = made.body.agent.id as string;
    const reach = async () =>
      Object.fromEntries(
        ((await appTool(server, dana.cookie, 'list_dms', { dm_id: started.body.data.dm_id })).body.view.messages as { author: { id: string; reach: boolean } }[]).map(
          (m) => [m.author.id, m.author.reach],
        ),
      );
    expect(await reach()).toEqual({ [agentId]: false, [dana.id]: false });
    // Dana confirms her address: her agent, linked to her and two days old, reads verified; she is new.
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = ${dana.id}`);
    await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id = ${agentId}`);
    expect(await reach()).toEqual({ [agentId]: true, [dana.id]: false });
    expect((await rest(server, made.body.agent_key, 'list_dms', { dm_id: started.body.data.dm_id })).body.text).toContain('Thanks! [link to example.org]');
    await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id = ${dana.id}`);
    expect(await reach()).toEqual({ [agentId]: true, [dana.id]: true });
    expect((await rest(server, made.body.agent_key, 'list_dms', { dm_id: started.body.data.dm_id })).body.text).toContain('Thanks! https://example.org/dana');
  });

  it('sends a message request to a stranger, who accepts it over MCP', async () => {
    const sender = await withReach('Sender');
    const stranger = await registerAgent(server, 'Stranger');
    const sent = await rest(server, sender.key, 'start_dm', { with: stranger.handle, body: 'Hello, may I ask about your pad?' });
    expect(sent.status).toBe(200);
    expect(sent.body.data.state).toBe('waiting');
    const dmId = sent.body.data.dm_id as string;
    expect(await stateFor(stranger, dmId)).toBe('request');
    // Waiting: the sender writes no more until it is accepted; one waiting per person.
    const early = await rest(server, sender.key, 'post_reply', { thread_id: dmId, body: 'Anyone?' });
    expect(early.status).toBe(403);
    const again = await rest(server, sender.key, 'start_dm', { with: stranger.id, body: 'Second request' });
    expect(again.status).toBe(403);
    expect(again.body.message).toContain('waiting');
    // The recipient reads the request, then accepts it.
    const client = await mcpClient(server, stranger.key);
    const read = await client.callTool({ name: 'list_dms', arguments: { dm_id: dmId } });
    expect((read.content as { text: string }[])[0]!.text).toContain('may I ask about your pad');
    const accepted = await client.callTool({ name: 'respond_to_dm', arguments: { dm_id: dmId, action: 'accept' } });
    expect(accepted.isError).toBeFalsy();
    expect(accepted.structuredContent).toMatchObject({ state: 'open', changed: true });
    expect(await stateFor(sender, dmId)).toBe('open');
    const now = await rest(server, sender.key, 'post_reply', { thread_id: dmId, body: 'Thanks for accepting.' });
    expect(now.status).toBe(200);
    expect(now.body.data.seq).toBe(2);
  });

  it('a blocked sender learns no more than a declined one', async () => {
    const sender = await withReach('Asker');
    const decliner = await registerAgent(server, 'Decliner');
    const blocker = await registerAgent(server, 'Blocker');
    const toDecliner = (await rest(server, sender.key, 'start_dm', { with: decliner.handle, body: 'Quick question?' })).body.data.dm_id as string;
    const toBlocker = (await rest(server, sender.key, 'start_dm', { with: blocker.handle, body: 'Quick question?' })).body.data.dm_id as string;

    const declined = await rest(server, decliner.key, 'respond_to_dm', { dm_id: toDecliner, action: 'decline' });
    expect(declined.body.data).toMatchObject({ state: 'closed', changed: true });
    const blocked = await (await mcpClient(server, blocker.key)).callTool({ name: 'respond_to_dm', arguments: { dm_id: toBlocker, action: 'block' } });
    expect(blocked.structuredContent).toMatchObject({ state: 'blocked', changed: true });

    // What the sender sees of each, with the other's handle taken out, is the same.
    const same = (text: string, handle: string) => text.replaceAll(handle, '@them').replaceAll(toDecliner, 'dm').replaceAll(toBlocker, 'dm');
    expect(await stateFor(sender, toDecliner)).toBe('declined');
    expect(await stateFor(sender, toBlocker)).toBe('declined');
    const readD = await rest(server, sender.key, 'list_dms', { dm_id: toDecliner });
    const readB = await rest(server, sender.key, 'list_dms', { dm_id: toBlocker });
    expect(readB.body.data.dm.state).toBe(readD.body.data.dm.state);
    const postD = await rest(server, sender.key, 'post_reply', { thread_id: toDecliner, body: 'Please?' });
    const postB = await rest(server, sender.key, 'post_reply', { thread_id: toBlocker, body: 'Please?' });
    expect(postD.status).toBe(403);
    expect(postB.status).toBe(postD.status);
    expect(same(postB.body.message, blocker.handle)).toBe(same(postD.body.message, decliner.handle));
    expect(postB.body.state).toBe('declined');
    const againD = await rest(server, sender.key, 'start_dm', { with: decliner.handle, body: 'Once more?' });
    const againB = await rest(server, sender.key, 'start_dm', { with: blocker.handle, body: 'Once more?' });
    expect(againB.status).toBe(againD.status);
    expect(same(againB.body.message, blocker.handle)).toBe(same(againD.body.message, decliner.handle));
    const respondD = await rest(server, sender.key, 'respond_to_dm', { dm_id: toDecliner, action: 'accept' });
    const respondB = await rest(server, sender.key, 'respond_to_dm', { dm_id: toBlocker, action: 'accept' });
    expect(respondB.status).toBe(respondD.status);
    expect(same(respondB.body.message, blocker.handle)).toBe(same(respondD.body.message, decliner.handle));

    // Blocking stands: the blocker is told to unblock first; after unblocking they may open it again.
    const blockerWrites = await rest(server, blocker.key, 'start_dm', { with: sender.handle, body: 'Actually, hi.' });
    expect(blockerWrites.status).toBe(403);
    expect(blockerWrites.body.message).toContain('unblock');
    const unblocked = await rest(server, blocker.key, 'respond_to_dm', { dm_id: toBlocker, action: 'unblock' });
    expect(unblocked.body.data).toMatchObject({ state: 'closed', changed: true });
    const reopened = await rest(server, blocker.key, 'start_dm', { with: sender.handle, body: 'Actually, hi.' });
    expect(reopened.status).toBe(200);
    expect(reopened.body.data).toMatchObject({ dm_id: toBlocker, state: 'open' });
    expect(await stateFor(sender, toBlocker)).toBe('open');
    // A report is kept and blocks.
    const reported = await rest(server, decliner.key, 'respond_to_dm', { dm_id: toDecliner, action: 'report' });
    expect(reported.body.data).toMatchObject({ state: 'blocked', changed: true });
    const kept = await server.core.db.pool.oneFirst(sql.unsafe`SELECT count(*)::int FROM dm_reports WHERE dm_id = ${toDecliner}`);
    expect(kept).toBe(1);
  });

  it('holds message requests to 500 characters, no links, reach, and 5 a day', async () => {
    const sender = await withReach('Busy');
    const stranger = async () => (await registerAgent(server, 'Someone')).handle;
    const long = await rest(server, sender.key, 'start_dm', { with: await stranger(), body: 'x'.repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.issues).toEqual([expect.objectContaining({ path: 'body' })]);
    for (const linked of ['See https://example.com', 'Visit www.example.org now', 'Go to [my page](/x)', 'spam.example.com is great']) {
      const reply = await rest(server, sender.key, 'start_dm', { with: await stranger(), body: linked });
      expect(reply.status, linked).toBe(400);
      expect(reply.body.message).toContain('no links');
    }
    // Between hub-mates neither rule applies.
    const mate = await registerAgent(server, 'Mate');
    await hubWith(sender, mate);
    const free = await rest(server, sender.key, 'start_dm', { with: mate.handle, body: `See https://example.com ${'y'.repeat(600)}` });
    expect(free.status).toBe(200);

    const noReach = await registerAgent(server, 'Newcomer');
    const refused = await rest(server, noReach.key, 'start_dm', { with: await stranger(), body: 'Hello there' });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('reach');
    expect(refused.body.message).toContain('/settings');

    for (let i = 0; i < 5; i++) {
      const ok = await rest(server, sender.key, 'start_dm', { with: await stranger(), body: `Hello number ${i}` });
      expect(ok.status).toBe(200);
      expect(ok.body.data.state).toBe('waiting');
    }
    const sixth = await rest(server, sender.key, 'start_dm', { with: await stranger(), body: 'Hello number 6' });
    expect(sixth.status).toBe(429);
    expect(sixth.body.error).toBe('rate_limited');
    expect(sixth.body.retry_after_seconds).toBeGreaterThan(23 * 3600);
  });

  it('counts DM writes against an unlinked agent\'s allowance, and pages the list newest first', async () => {
    const lone = await registerAgent(server, 'Lone', { unlinked: true });
    const mates = [await registerAgent(server, 'M1'), await registerAgent(server, 'M2'), await registerAgent(server, 'M3')];
    await hubWith(lone, ...mates);
    const first = await rest(server, lone.key, 'start_dm', { with: mates[0]!.handle, body: 'One' });
    expect(first.body.data.allowance).toMatchObject({ limit: 20 });
    const used = first.body.data.allowance.used as number;
    const second = await rest(server, lone.key, 'post_reply', { thread_id: first.body.data.dm_id, body: 'Two' });
    expect(second.body.data.allowance.used).toBe(used + 1);
    const ids = [first.body.data.dm_id as string];
    for (const mate of mates.slice(1)) ids.push((await rest(server, lone.key, 'start_dm', { with: mate.id, body: 'Hi' })).body.data.dm_id);
    // Newest first; the oldest DM moves up when written in.
    await rest(server, mates[0]!.key, 'post_reply', { thread_id: ids[0], body: 'Back to you' });
    const all = await rest(server, lone.key, 'list_dms', {});
    expect(all.body.data.dms.map((d: { id: string }) => d.id)).toEqual([ids[0], ids[2], ids[1]]);
    expect(all.body.data.next_cursor).toBeUndefined();
    // Pages follow the same order (the tool's page is 20; the core's size is set smaller here).
    const reader = { id: lone.id } as Actor;
    const page1 = (await listDms(server.core, reader, { limit: 2 })) as DmList;
    expect(page1.dms.map((d) => d.id)).toEqual([ids[0], ids[2]]);
    const page2 = (await listDms(server.core, reader, { limit: 2, cursor: page1.next_cursor! })) as DmList;
    expect(page2.dms.map((d) => d.id)).toEqual([ids[1]]);
    expect(page2.next_cursor).toBeNull();
    const bad = await rest(server, lone.key, 'list_dms', { cursor: 'not-a-cursor' });
    expect(bad.status).toBe(400);
  });

  it('refuses sub-agent keys', async () => {
    const parent = await registerAgent(server, 'Parent');
    const mate = await registerAgent(server, 'Mate2');
    const hub = await hubWith(parent, mate);
    const thread = await rest(server, parent.key, 'start_thread', { hub: hub.slug, title: 'Work', body: 'Start' });
    const minted = await rest(server, parent.key, 'mint_subagent', { thread_ids: [thread.body.data.thread_id] });
    expect(minted.status).toBe(200);
    const subKey = minted.body.data.agent_key as string;
    expect((await rest(server, subKey, 'start_dm', { with: mate.handle, body: 'Hi' })).status).toBe(403);
    expect((await rest(server, subKey, 'list_dms', {})).status).toBe(403);
  });
});
