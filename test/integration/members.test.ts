import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDoors, type AgentDoor, type DoorAnswer } from '../support/agentDoors.ts';
import { sql } from 'slonik';
import { z } from 'zod';
import { NOT_FOUND_BODY } from '../../api/markdown.ts';
import { openProvider, poke, registerAgent, request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Members in hubs (SPEC part 2 "Hub roles and rights", part 4 `moderate`, `set_hub_guide`,
 * `set_hub_visibility`, `join_hub`): each action and each refusal, through REST and MCP alike, on a
 * server with public hubs on.
 */

type Agent = { key: string; id: string; handle: string };
type Door = AgentDoor;
/** What a tool call answered, the same shape whichever door it came through. */
type Answer = DoorAnswer;

const DOORS: Door[] = ['rest', 'mcp'];

describe.each(stores())('members in hubs on %s', (store) => {
  let server: TestServer;
  let owner: Agent;
  let helper: Agent;
  let member: Agent;
  let doors: ReturnType<typeof agentDoors>;
  const call = (door: Door, agent: Agent, tool: string, args: Record<string, unknown>): Promise<Answer> => doors.call(door, agent, tool, args);

  const pending = (hubId: string) =>
    server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM join_requests WHERE hub_id = ${hubId}`);

  /** A private hub of the owner's, with the helper and the member seated by the tools themselves. */
  async function hubWithPeople(door: Door, name = 'Reading Room') {
    const made = await call(door, owner, 'create_hub', { name });
    const hub = { id: made.body.hub_id as string, slug: made.body.slug as string };
    for (const agent of [helper, member]) {
      await call(door, agent, 'join_hub', { hub: hub.slug });
      expect((await call(door, owner, 'moderate', { hub: hub.slug, action: 'let_in', who: agent.id })).ok).toBe(true);
    }
    expect((await call(door, owner, 'moderate', { hub: hub.slug, action: 'name_helper', who: helper.handle })).body.role).toBe('helper');
    return hub;
  }

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
    doors = agentDoors(server);
    [owner, helper, member] = await Promise.all([registerAgent(server, 'Owner Olga'), registerAgent(server, 'Helper Hal'), registerAgent(server, 'Member Mia')]);
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  describe.each(DOORS)('through %s', (door) => {
    it('let_in seats someone who asked; open_hub shows owners the requests with notes, and everyone seated the members', async () => {
      const hub = await hubWithPeople(door);
      const asker = await registerAgent(server, 'Asking Ann');
      const asked = await call(door, asker, 'join_hub', { hub: hub.slug, note: 'I read the same papers.' });
      expect(asked.body).toEqual({ status: 'requested' });
      expect(await pending(hub.id)).toBe(1);

      const seen = await call(door, helper, 'open_hub', { hub: hub.slug });
      expect(seen.body.requests).toEqual([{ id: asker.id, kind: 'agent', asked: expect.any(String) }]);
      expect(seen.body.request_count).toBe(1);
      expect(seen.text).toContain('## Waiting to join (1)');
      expect(seen.text).toContain(`Let one in: moderate with {"hub": "${hub.slug}", "action": "let_in", "who": "<id>"}`);
      expect(seen.text).toContain(`Asking Ann (agent) · ${asker.handle} · ${asker.id}`);
      // The note is the asker's text: framed as data, and never in the structured content.
      expect(seen.text).toMatch(/~~~markdown\nI read the same papers\.\n~~~/);
      expect(JSON.stringify(seen.body)).not.toContain('same papers');

      const plain = await call(door, member, 'open_hub', { hub: hub.slug });
      expect(plain.body).not.toHaveProperty('requests');
      expect(plain.text).not.toContain('Waiting to join');
      expect(plain.body.members).toEqual([
        { id: owner.id, kind: 'agent', role: 'owner' },
        { id: helper.id, kind: 'agent', role: 'helper' },
        { id: member.id, kind: 'agent', role: 'member' },
      ]);
      expect(plain.body.member_count).toBe(3);
      expect(plain.text).toContain(`Member Mia (agent) · ${member.handle} · ${member.id} · member`);

      const let_in = await call(door, helper, 'moderate', { hub: hub.slug, action: 'let_in', who: asker.id });
      expect(let_in.body).toEqual({ hub_id: hub.id, slug: hub.slug, action: 'let_in', participant_id: asker.id, role: 'member', changed: true });
      expect(let_in.text).toContain('Let Asking Ann');
      expect(await pending(hub.id)).toBe(0);
      expect((await call(door, asker, 'open_hub', { hub: hub.slug })).body.seat).toEqual({ role: 'member' });
      expect((await call(door, asker, 'join_hub', { hub: hub.slug })).body).toMatchObject({ status: 'member', role: 'member' });
      // The request is gone: letting in again finds nobody waiting.
      const again = await call(door, helper, 'moderate', { hub: hub.slug, action: 'let_in', who: asker.id });
      expect(again.body).toMatchObject({ error: 'not_found' });
    });

    it('turn_away drops a request and seats nobody; the one turned away may ask again', async () => {
      const hub = await hubWithPeople(door);
      const asker = await registerAgent(server, 'Turned Tom');
      await call(door, asker, 'join_hub', { hub: hub.id });
      const turned = await call(door, helper, 'moderate', { hub: hub.slug, action: 'turn_away', who: asker.handle.toUpperCase() });
      expect(turned.body).toEqual({ hub_id: hub.id, slug: hub.slug, action: 'turn_away', participant_id: asker.id, changed: true });
      expect(await pending(hub.id)).toBe(0);
      expect((await call(door, asker, 'open_hub', { hub: hub.slug })).body).toMatchObject({ error: 'not_found' });
      expect((await call(door, asker, 'join_hub', { hub: hub.slug })).body).toEqual({ status: 'requested' });
      expect(await pending(hub.id)).toBe(1);
    });

    it('remove takes the seat at once (kept reads too) and closes the live pad within seconds', async () => {
      const hub = await hubWithPeople(door);
      const leaving = await registerAgent(server, 'Leaving Leo');
      await call(door, leaving, 'join_hub', { hub: hub.slug });
      await call(door, owner, 'moderate', { hub: hub.slug, action: 'let_in', who: leaving.id });
      const thread = await call(door, owner, 'start_thread', { hub: hub.slug, title: 'Plans', body: 'Next steps.' });
      const pad = await call(door, owner, 'create_pad', { hub: hub.slug, title: 'Notes', text: 'Members only.' });
      // Read twice, so the thread is kept in memory for the reader.
      for (let i = 0; i < 2; i++) expect((await call(door, leaving, 'open_thread', { thread_id: thread.body.thread_id })).ok).toBe(true);
      const live = await openProvider(server, pad.body.pad_id, leaving.key);
      try {
        await live.synced;
        let closed = 0;
        live.provider.on('close', () => closed++);

        const removed = await call(door, helper, 'moderate', { hub: hub.slug, action: 'remove', who: leaving.id });
        expect(removed.body).toEqual({ hub_id: hub.id, slug: hub.slug, action: 'remove', participant_id: leaving.id, changed: true });
        expect((await call(door, leaving, 'open_thread', { thread_id: thread.body.thread_id })).body).toMatchObject({ error: 'not_found' });
        expect((await call(door, leaving, 'post_reply', { thread_id: thread.body.thread_id, body: 'Still here?' })).body).toMatchObject({ error: 'not_found' });
        const members = (await call(door, owner, 'open_hub', { hub: hub.slug })).body.members as { id: string }[];
        expect(members.map((m) => m.id)).not.toContain(leaving.id);
        await expect.poll(() => closed, { interval: 200 }).toBeGreaterThan(0);
      } finally {
        live.close();
      }
    });

    it('remove also takes seats given in one thread or pad of the hub', async () => {
      const hub = await hubWithPeople(door);
      const thread = await call(door, owner, 'start_thread', { hub: hub.slug, title: 'Guest room', body: 'Only this thread.' });
      const invited = await registerAgent(server, 'Invited Ivy');
      // As an invite to one thread seats someone.
      await poke(server, sql.unsafe`
        INSERT INTO item_members (item_id, participant_id, hub_id) VALUES (${thread.body.thread_id}, ${invited.id}, ${hub.id})`);
      const seats = () => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*) AS n FROM item_members WHERE hub_id = ${hub.id} AND participant_id = ${invited.id}`);
      expect(await seats()).toBe(1);
      // Not a member of the hub itself: no role to change.
      expect((await call(door, owner, 'moderate', { hub: hub.slug, action: 'name_helper', who: invited.id })).body.error).toBe('not_found');
      const removed = await call(door, helper, 'moderate', { hub: hub.slug, action: 'remove', who: invited.handle });
      expect(removed.body).toMatchObject({ action: 'remove', participant_id: invited.id, changed: true });
      expect(await seats()).toBe(0);
    });

    it('name_helper gives the rights of a helper; name_member takes them back', async () => {
      const hub = await hubWithPeople(door);
      const asker = await registerAgent(server, 'Waiting Wes');
      await call(door, asker, 'join_hub', { hub: hub.slug });
      expect((await call(door, member, 'moderate', { hub: hub.slug, action: 'turn_away', who: asker.id })).body.error).toBe('forbidden');

      const named = await call(door, owner, 'moderate', { hub: hub.slug, action: 'name_helper', who: member.id });
      expect(named.body).toMatchObject({ action: 'name_helper', participant_id: member.id, role: 'helper', changed: true });
      const twice = await call(door, owner, 'moderate', { hub: hub.slug, action: 'name_helper', who: member.id });
      expect(twice.body).toMatchObject({ role: 'helper', changed: false });
      expect(twice.text).toContain('nothing changed');
      expect((await call(door, member, 'open_hub', { hub: hub.slug })).body.requests).toHaveLength(1);

      const back = await call(door, owner, 'moderate', { hub: hub.slug, action: 'name_member', who: member.id });
      expect(back.body).toMatchObject({ action: 'name_member', role: 'member', changed: true });
      expect((await call(door, member, 'moderate', { hub: hub.slug, action: 'let_in', who: asker.id })).body.error).toBe('forbidden');
      expect(await pending(hub.id)).toBe(1);
    });

    it('refuses, the same on every door: members moderating, helpers naming helpers or removing one, anyone removing the owner, nobody waiting', async () => {
      const hub = await hubWithPeople(door);
      const refusals: [Agent, Record<string, unknown>, string, RegExp][] = [
        [member, { action: 'remove', who: helper.id }, 'forbidden', /owner and helpers/],
        [helper, { action: 'name_helper', who: member.id }, 'forbidden', /Only the owner .* names helpers/],
        [helper, { action: 'name_member', who: helper.id }, 'forbidden', /Only the owner .* names helpers/],
        [owner, { action: 'remove', who: owner.id }, 'forbidden', /Nobody removes the owner/],
        [helper, { action: 'remove', who: owner.handle }, 'forbidden', /Nobody removes the owner/],
        [owner, { action: 'name_member', who: owner.id }, 'forbidden', /owner's role does not change/],
        [owner, { action: 'let_in', who: 'agt_00000000000000000000' }, 'not_found', /open_hub lists the waiting requests/],
        [owner, { action: 'turn_away', who: member.id }, 'not_found', /open_hub lists the waiting requests/],
        [owner, { action: 'remove', who: '@nobody-at-all' }, 'not_found', /open_hub lists the members/],
        [owner, { action: 'lock', who: member.id }, 'invalid', /Action "lock" needs thread_id or pad_id/],
        [owner, { action: 'ban', who: member.id }, 'invalid', /let_in, turn_away, remove, name_helper, name_member, settle, hide, unhide, delete, pause_agents, unpause_agents, lock, unlock/],
        [owner, { action: 'hide', who: member.id }, 'invalid', /"hide" needs post_id/],
      ];
      for (const [who, args, error, message] of refusals) {
        const answer = await call(door, who, 'moderate', { hub: hub.slug, ...args });
        expect(answer.ok, JSON.stringify(args)).toBe(false);
        expect(answer.body.error, JSON.stringify(args)).toBe(error);
        expect(answer.body.message).toMatch(message);
      }
      // A helper removes members, never another helper: only the owner unmakes helpers.
      const second = await registerAgent(server, 'Second Helper');
      await call(door, second, 'join_hub', { hub: hub.slug });
      await call(door, owner, 'moderate', { hub: hub.slug, action: 'let_in', who: second.id });
      await call(door, owner, 'moderate', { hub: hub.slug, action: 'name_helper', who: second.id });
      expect((await call(door, helper, 'moderate', { hub: hub.slug, action: 'remove', who: second.id })).body.message).toMatch(/Only the owner removes a helper/);
      // Nothing changed: everyone keeps their seat.
      const members = (await call(door, owner, 'open_hub', { hub: hub.slug })).body.members;
      expect(members.map((m: { role: string }) => m.role)).toEqual(['owner', 'helper', 'helper', 'member']);
      // A stranger moderating a private hub learns nothing: the answer a missing hub gets.
      const stranger = await registerAgent(server, 'Stranger Stu');
      const hidden = await call(door, stranger, 'moderate', { hub: hub.slug, action: 'remove', who: member.id });
      const missing = await call(door, stranger, 'moderate', { hub: 'no-such-hub', action: 'remove', who: member.id });
      expect(hidden.body.error).toBe('not_found');
      expect(hidden.body).toEqual(missing.body);
    });

    it('join_hub answers a stranger alike for a private hub and a missing one, and keeps the request for the owners', async () => {
      const hub = await hubWithPeople(door, 'Secret Garden');
      const stranger = await registerAgent(server, 'Curious Cat');
      const bySlug = await call(door, stranger, 'join_hub', { hub: hub.slug, note: 'Let me in?' });
      const missingSlug = await call(door, stranger, 'join_hub', { hub: 'no-garden-here', note: 'Let me in?' });
      const byId = await call(door, stranger, 'join_hub', { hub: hub.id });
      const missingId = await call(door, stranger, 'join_hub', { hub: 'hub_00000000000000000000' });
      for (const answer of [bySlug, byId]) {
        expect(answer.ok).toBe(true);
        expect(answer.body).toEqual({ status: 'requested' });
        expect(answer.text).toContain('If this hub exists, your request to join is with its owners');
        expect(answer.text).not.toContain('Secret Garden');
        expect(answer.text).not.toContain(hub.id);
      }
      expect(bySlug).toEqual(missingSlug);
      expect(byId).toEqual(missingId);
      // Recorded once, for the private hub's owners.
      expect(await pending(hub.id)).toBe(1);
      expect((await call(door, owner, 'open_hub', { hub: hub.slug })).body.requests.map((r: { id: string }) => r.id)).toEqual([stranger.id]);
    });

    it('set_hub_guide: owner and helpers write Read me first, shown by open_hub and /h/<slug>.md; 4,000 characters at most', async () => {
      const hub = await hubWithPeople(door);
      const guide = '# Welcome\n\nRead the *rules* pad first; ask in the Questions thread.';
      const saved = await call(door, helper, 'set_hub_guide', { hub: hub.slug, text: guide });
      expect(saved.body).toEqual({ hub_id: hub.id, slug: hub.slug, characters: guide.length, changed: true });
      const same = await call(door, owner, 'set_hub_guide', { hub: hub.slug, text: guide });
      expect(same.body.changed).toBe(false);

      const opened = await call(door, member, 'open_hub', { hub: hub.slug });
      expect(opened.text).toContain(`## Read me first\n~~~markdown\n${guide}\n~~~`);
      const markdown = await request(`${server.url}/h/${hub.slug}.md`, { headers: { authorization: `Bearer ${member.key}` } });
      expect(markdown.status).toBe(200);
      expect(markdown.text).toContain(`## Read me first\n\n~~~markdown\n${guide}\n~~~`);

      const long = await call(door, owner, 'set_hub_guide', { hub: hub.slug, text: 'x'.repeat(4_001) });
      expect(long.body).toMatchObject({ error: 'too_large', issues: [{ path: 'text' }] });
      const refused = await call(door, member, 'set_hub_guide', { hub: hub.slug, text: 'Mine now.' });
      expect(refused.body).toMatchObject({ error: 'forbidden' });
      expect(refused.body.message).toMatch(/owner and helpers/);
      expect((await call(door, member, 'open_hub', { hub: hub.slug })).text).toContain(guide);

      const cleared = await call(door, owner, 'set_hub_guide', { hub: hub.slug, text: '' });
      expect(cleared.body).toMatchObject({ characters: 0, changed: true });
      expect((await call(door, member, 'open_hub', { hub: hub.slug })).text).not.toContain('Read me first\n');
    });

    it('set_hub_visibility: the preview changes nothing, confirm publishes, and making private takes it back', async () => {
      const hub = await hubWithPeople(door);
      await call(door, owner, 'start_thread', { hub: hub.slug, title: 'Open questions', body: 'First.' });
      await call(door, owner, 'create_pad', { hub: hub.slug, title: 'Findings' });
      const signedOut = () => request(`${server.url}/h/${hub.slug}.md`);
      expect((await signedOut()).status).toBe(404);

      for (const who of [helper, member]) {
        const refused = await call(door, who, 'set_hub_visibility', { hub: hub.slug, audience: 'public', confirm: true });
        expect(refused.body).toMatchObject({ error: 'forbidden', message: expect.stringMatching(/Only the owner/) });
      }

      const preview = await call(door, owner, 'set_hub_visibility', { hub: hub.slug, audience: 'public' });
      expect(preview.body).toEqual({ hub_id: hub.id, slug: hub.slug, audience: 'private', status: 'preview', threads: 1, pads: 1, posts: 1, members: 3, accepts_guests: false });
      // A preview changes nothing, the guests' switch with it.
      expect((await call(door, owner, 'set_hub_visibility', { hub: hub.slug, audience: 'public', accepts_guests: true })).body).toMatchObject({ status: 'preview', accepts_guests: false });
      expect(preview.text).toContain('Preview, nothing changed');
      expect(preview.text).toContain('"confirm": true');
      expect((await signedOut()).text).toBe(NOT_FOUND_BODY);

      const published = await call(door, owner, 'set_hub_visibility', { hub: hub.slug, audience: 'public', confirm: true });
      expect(published.body).toMatchObject({ audience: 'public', status: 'published' });
      const open = await signedOut();
      expect(open.status).toBe(200);
      expect(open.text).toContain('audience: "public"');
      const joiner = await registerAgent(server, 'Public Pat');
      expect((await call(door, joiner, 'join_hub', { hub: hub.slug })).body).toMatchObject({ status: 'joined', hub_id: hub.id });
      expect((await call(door, owner, 'set_hub_visibility', { hub: hub.slug, audience: 'public', confirm: true })).body.status).toBe('unchanged');
      // The owner alone says whether it takes guests; with the audience kept, at once.
      const byHelper = await call(door, helper, 'set_hub_visibility', { hub: hub.slug, audience: 'public', accepts_guests: true });
      expect(byHelper.body.error).toBe('forbidden');
      const guests = await call(door, owner, 'set_hub_visibility', { hub: hub.slug, audience: 'public', accepts_guests: true });
      expect(guests.body).toMatchObject({ audience: 'public', status: 'unchanged', accepts_guests: true });
      expect(guests.text).toContain('It takes guests now');
      expect((await call(door, owner, 'open_hub', { hub: hub.slug })).body.audience).toBe('public');

      const back = await call(door, owner, 'set_hub_visibility', { hub: hub.slug, audience: 'private' });
      expect(back.body).toMatchObject({ audience: 'public', status: 'preview', members: 4 });
      expect((await signedOut()).status).toBe(200);
      const hidden = await call(door, owner, 'set_hub_visibility', { hub: hub.slug, audience: 'private', confirm: true });
      expect(hidden.body).toMatchObject({ audience: 'private', status: 'made_private' });
      expect((await signedOut()).status).toBe(404);
      // Who joined while it was public keeps the seat.
      expect((await call(door, joiner, 'open_hub', { hub: hub.slug })).body.seat).toEqual({ role: 'member' });
    });
  });

  it('a hub holds at most 5,000 members: the next join or let_in is refused 409 and changes nothing; someone seated already still passes', async () => {
    const made = await rest(server, owner.key, 'create_hub', { name: 'Full House' });
    const hub = made.body.data as { hub_id: string; slug: string };
    // 4,998 more beside the owner, straight in the store.
    await poke(server, sql.unsafe`
      INSERT INTO participants (id, kind, name, handle)
      SELECT 'agt_full' || g, 'agent', 'Seat ' || g, 'full-house-seat-' || g FROM generate_series(1, 4998) g`);
    await poke(server, sql.unsafe`
      INSERT INTO hub_members (hub_id, participant_id, role) SELECT ${hub.hub_id}, 'agt_full' || g, 'member' FROM generate_series(1, 4998) g`);
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    const [last, late, asker] = [await registerAgent(server, 'Last Seat'), await registerAgent(server, 'Too Late'), await registerAgent(server, 'Asking Late')];
    const members = () => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM hub_members WHERE hub_id = ${hub.hub_id}`);

    expect((await rest(server, last.key, 'join_hub', { hub: hub.slug })).body.data.status).toBe('joined');
    expect(await members()).toBe(5_000);
    const refused = await rest(server, late.key, 'join_hub', { hub: hub.slug });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toMatchObject({ error: 'conflict', max: 5_000 });
    expect(refused.body.message).toContain('5,000 members');
    expect(refused.body.message).toContain('moderate remove');
    expect((await rest(server, last.key, 'join_hub', { hub: hub.slug })).status).toBe(200);

    // Private now: a request waits, and letting it in is refused while full, the request kept.
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'private' WHERE id = ${hub.hub_id}`);
    expect((await rest(server, asker.key, 'join_hub', { hub: hub.slug })).body.data.status).toBe('requested');
    const letIn = await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'let_in', who: asker.id });
    expect(letIn.status, letIn.text).toBe(409);
    expect(await pending(hub.hub_id)).toBe(1);
    expect(await members()).toBe(5_000);

    // Room made: the one waiting gets in.
    expect((await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'remove', who: last.id })).status).toBe(200);
    expect((await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'let_in', who: asker.id })).status).toBe(200);
    expect(await members()).toBe(5_000);
  });

  it('register with hub answers a newcomer alike for a private hub and a missing one, naming neither', async () => {
    const hub = await hubWithPeople('rest', 'Hidden Lab');
    const register = (ref: string) =>
      request(`${server.url}/api/v1/agents/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Newcomer', hub: ref, note: 'Hello there' }),
      });
    const shown = (reply: { body: Record<string, unknown> }, ref: string) => {
      const { agent: _a, agent_key: _k, key_expires_at: _e, link_url: _l, claim_url: _c, ...rest } = reply.body;
      return JSON.parse(JSON.stringify(rest).replaceAll(ref, '<hub>'));
    };
    for (const [ref, missing] of [
      [hub.slug, 'no-lab-here'],
      [hub.id, 'hub_00000000000000000000'],
    ] as const) {
      const asked = await register(ref);
      const lost = await register(missing);
      expect(asked.status).toBe(201);
      expect(lost.status).toBe(201);
      expect(asked.body).toMatchObject({ joined: false, requested: true });
      expect(asked.body).not.toHaveProperty('hub');
      expect(shown(asked, ref)).toEqual(shown(lost, missing));
      expect(asked.text).not.toContain('Hidden Lab');
      if (ref === hub.slug) expect(asked.text).not.toContain(hub.id);
    }
    // Both requests to the private hub are with its owners.
    expect(await pending(hub.id)).toBe(2);
  });

  it('publishing is refused while public hubs are off on the server; making private still works', { tags: ['heavy'] }, async () => {
    const closed = await startTestServer(store);
    try {
      const owner = await registerAgent(closed, 'Closed Owner');
      const made = await rest(closed, owner.key, 'create_hub', { name: 'Stays Private' });
      for (const confirm of [false, true]) {
        const refused = await rest(closed, owner.key, 'set_hub_visibility', { hub: made.body.data.slug, audience: 'public', confirm });
        expect(refused.status).toBe(403);
        expect(refused.body.message).toContain('SVC_PUBLIC_THREADS');
      }
      const privately = await rest(closed, owner.key, 'set_hub_visibility', { hub: made.body.data.slug, audience: 'private', confirm: true });
      expect(privately.body.data).toMatchObject({ audience: 'private', status: 'unchanged' });
    } finally {
      await closed.close();
    }
  });
});
