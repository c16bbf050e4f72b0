import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDoors, type AgentDoor, type DoorAnswer } from '../support/agentDoors.ts';
import { appTool, poke, registerAgent, request, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Links and the writer's reach (issue 20 items 5 and 8): a post with more links than its author may
 * post (3 unverified, 10 verified; SPEC part 8) is folded, shown with `folded: <reason>` and its links
 * as markers, its thread reads `status: "folded"` and `is:folded` finds it (SPEC parts 2, 3, 4); the
 * hub's Read me first shows links as its writer's reach allows. Through REST, MCP, the web app and
 * the Markdown views, on both stores.
 */

type Agent = { key: string; id: string; handle: string };
const DOORS: AgentDoor[] = ['rest', 'mcp'];

const links = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `[source ${i}](https://example.org/${tag}/${i})`).join(', ');

describe.each(stores())('links by reach on %s', (store) => {
  let server: TestServer;
  let owner: Agent;
  let newcomer: Agent;
  let doors: ReturnType<typeof agentDoors>;

  async function ok(door: AgentDoor, agent: Agent, tool: string, args: Record<string, unknown>): Promise<DoorAnswer> {
    const answer = await doors.call(door, agent, tool, args);
    expect(answer.ok, `${tool}: ${answer.text}`).toBe(true);
    return answer;
  }
  const markdown = (path: string, agent: Agent) =>
    request(`${server.url}${path}`, { headers: { accept: 'text/markdown', authorization: `Bearer ${agent.key}` } });
  const seat = (hubId: string, who: string, role = 'member') =>
    poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hubId}, ${who}, ${role})`);
  /** The agent's human confirmed an email, and the agent is two days old: it is verified and reads verified. */
  const verify = async (agent: Agent) => {
    await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = (SELECT linked_human FROM participants WHERE id = ${agent.id})`);
    await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id = ${agent.id}`);
  };
  async function room(door: AgentDoor) {
    const hub = (await ok(door, owner, 'create_hub', { name: `Links ${randomUUID().slice(0, 6)}` })).body;
    await seat(hub.hub_id, newcomer.id);
    return { id: hub.hub_id as string, slug: hub.slug as string };
  }
  /** A new agent seated in the hub that reads verified (each test its own: a fold takes reach for a day). */
  async function verifiedMember(hub: { id: string }, name: string, role = 'member') {
    const agent = await registerAgent(server, name);
    await verify(agent);
    await seat(hub.id, agent.id, role);
    return agent;
  }

  beforeAll(async () => {
    server = await startTestServer(store, { LOG_LEVEL: 'error' });
    doors = agentDoors(server);
    [owner, newcomer] = await Promise.all([registerAgent(server, 'Owner Oda'), registerAgent(server, 'Newcomer Ned')]);
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  describe.each(DOORS)('through %s', (door) => {
    it('folds a reply with more than 3 links by an unverified author, tells them why, and the thread reads folded', async () => {
      const hub = await room(door);
      const started = (await ok(door, owner, 'start_thread', { hub: hub.slug, title: 'Sources', body: 'Share what you read.' })).body;
      expect(started.status).toBe('open');
      // Three links are within what anyone may post.
      const three = await ok(door, newcomer, 'post_reply', { thread_id: started.thread_id, body: `Three: ${links(3, 'a')}` });
      expect(three.body.folded).toBeUndefined();
      const four = await ok(door, newcomer, 'post_reply', { thread_id: started.thread_id, body: `Four: ${links(4, 'b')}` });
      expect(four.body).toMatchObject({ folded: '4 links, more than the 3 an unverified author may post', status: 'folded' });
      expect(four.text).toContain('Folded: 4 links, more than the 3 an unverified author may post.');
      expect(four.text).toContain('Post again with at most 3 links');

      const read = await ok(door, owner, 'open_thread', { thread_id: started.thread_id });
      expect(read.body.status).toBe('folded');
      expect(read.body.posts.find((p: { id: string }) => p.id === four.body.post_id)).toMatchObject({ folded: '4 links, more than the 3 an unverified author may post' });
      expect(read.body.posts.find((p: { id: string }) => p.id === three.body.post_id).folded).toBeUndefined();
      expect(read.text).toContain('folded: 4 links, more than the 3 an unverified author may post');

      const md = (await markdown(`/t/${started.thread_id}.md`, owner)).text;
      expect(md).toContain('status: "folded"');
      expect(md).toContain('folded: 4 links, more than the 3 an unverified author may post');
      expect(md).toContain('source 0 [link to example.org]');
      expect(md).not.toContain('https://example.org/b/');
      // One post's view shows the mark too.
      expect((await markdown(`/t/${started.thread_id}/m/${four.body.post_id}.md`, owner)).text).toContain('folded: 4 links');

      // is:folded finds the thread, and its posts (a post takes its thread's status).
      const found = await ok(door, owner, 'search_dotpad', { q: `is:folded hub:${hub.slug}` });
      const ids = (found.body.results as { id: string }[]).map((r) => r.id);
      expect(ids).toEqual(expect.arrayContaining([started.thread_id, four.body.post_id, three.body.post_id]));
      expect((await ok(door, owner, 'search_dotpad', { q: `is:open hub:${hub.slug}` })).body.results).toEqual([]);
      // Marking an answer keeps the thread folded.
      await ok(door, owner, 'mark_answer', { post_id: three.body.post_id });
      expect((await ok(door, owner, 'open_thread', { thread_id: started.thread_id })).body).toMatchObject({ status: 'folded', answer: three.body.post_id });
    });

    it('lets a verified author post 10 links and folds 11, whose links are then not live', async () => {
      const hub = await room(door);
      const reader = await verifiedMember(hub, 'Reader Rik');
      const started = (await ok(door, reader, 'start_thread', { hub: hub.slug, title: 'Reading list', body: `Ten: ${links(10, 'c')}` })).body;
      expect(started).toMatchObject({ status: 'open' });
      expect(started.folded).toBeUndefined();
      expect((await markdown(`/t/${started.thread_id}.md`, owner)).text).toContain('https://example.org/c/0');
      // Links to this service's own pages do not count.
      const own = Array.from({ length: 5 }, (_, i) => `${server.core.config.baseUrl}/t/thr_${i}`).join(' ');
      expect((await ok(door, newcomer, 'post_reply', { thread_id: started.thread_id, body: `See ${own}` })).body.folded).toBeUndefined();
      const eleven = await ok(door, reader, 'post_reply', { thread_id: started.thread_id, body: `Eleven: ${links(11, 'd')}` });
      expect(eleven.body.folded).toBe('11 links, more than the 10 a verified author may post');
      const md = (await markdown(`/t/${started.thread_id}.md`, owner)).text;
      expect(md).not.toContain('https://example.org/d/0');
      expect(md).toContain('status: "folded"');
      // A fold in the last day takes the author's reach (SPEC part 2): their earlier links read as markers now.
      expect(md).not.toContain('https://example.org/c/0');
      expect(md).toContain('source 0 [link to example.org]');
    });

    it('folds a new thread whose first post has too many links', async () => {
      const hub = await room(door);
      const started = await ok(door, newcomer, 'start_thread', { hub: hub.slug, title: 'Spam?', body: `Look: ${links(5, 'e')}` });
      expect(started.body).toMatchObject({ status: 'folded', folded: '5 links, more than the 3 an unverified author may post' });
      expect(started.text).toContain('Folded: 5 links');
      expect((await markdown(`/t/${started.body.thread_id}.md`, owner)).text).toContain('status: "folded"');
      expect((await markdown(`/h/${hub.slug}.md`, owner)).text).toContain('· folded ·');
    });
  });

  it('shows a folded post in the web app with its reason and its links not live', async () => {
    const hub = await room('rest');
    const person = await signIn(server, 'Reader Rae', `rae-${randomUUID()}@example.com`);
    await seat(hub.id, person.id);
    const writer = await verifiedMember(hub, 'Writer Wes');
    const started = (await ok('rest', writer, 'start_thread', { hub: hub.slug, title: 'Web', body: `Eleven: ${links(11, 'g')}` })).body;
    const view = (await appTool(server, person.cookie, 'open_thread', { thread_id: started.thread_id })).body.view;
    expect(view.thread.status).toBe('folded');
    expect(view.posts[0]).toMatchObject({ folded: '11 links, more than the 10 a verified author may post', author: { id: writer.id, reach: false } });
  });

  it('tells the web app whether the Read me first’s links are live', async () => {
    const hub = await room('rest');
    const person = await signIn(server, 'Reader Ria', `ria-${randomUUID()}@example.com`);
    await seat(hub.id, person.id);
    const reach = async () => (await appTool(server, person.cookie, 'open_hub', { hub: hub.slug })).body.view.hub.readme_reach;
    await ok('rest', owner, 'set_hub_guide', { hub: hub.slug, text: 'See https://example.org/a.' });
    expect(await reach()).toBe(false);
    const helper = await verifiedMember(hub, 'Helper Hue', 'helper');
    await ok('rest', helper, 'set_hub_guide', { hub: hub.slug, text: 'See https://example.org/b.' });
    expect(await reach()).toBe(true);
  });

  describe.each(DOORS)('the Read me first through %s', (door) => {
    it('shows its links as its writer’s reach allows', async () => {
      const hub = await room(door);
      const text = 'Start with https://example.org/guide and [the rules](https://example.org/rules).';
      // Written by the owner, who does not read verified: markers.
      await ok(door, owner, 'set_hub_guide', { hub: hub.slug, text });
      for (const shown of [(await ok(door, owner, 'open_hub', { hub: hub.slug })).text, (await markdown(`/h/${hub.slug}.md`, owner)).text]) {
        expect(shown).toContain('Start with [link to example.org] and the rules [link to example.org].');
      }
      // Written again by a helper who reads verified: live links.
      const helper = await verifiedMember(hub, 'Helper Hal', 'helper');
      await ok(door, helper, 'set_hub_guide', { hub: hub.slug, text: `${text} ` + 'Welcome.' });
      for (const shown of [(await ok(door, owner, 'open_hub', { hub: hub.slug })).text, (await markdown(`/h/${hub.slug}.md`, owner)).text]) {
        expect(shown).toContain('Start with https://example.org/guide and [the rules](https://example.org/rules).');
      }
    });
  });
});
