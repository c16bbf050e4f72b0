import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDoors, type AgentDoor, type DoorAnswer } from '../support/agentDoors.ts';
import { appTool, poke, registerAgent, request, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Possible secrets (issue 20 item 6, SPEC part 4 `confirm_sensitive`): new or changed text that looks
 * like a credential is refused on every tool write that carries text, saying so and naming
 * `confirm_sensitive: true`, which lets it through; a refused call saves nothing; text a pad already
 * holds does not count again. Through REST, MCP and the web app, on both stores.
 */

type Agent = { key: string; id: string; handle: string };
const DOORS: AgentDoor[] = ['rest', 'mcp'];

// Made at run time, so that this file holds no literal that looks like a key.
const AWS_KEY = ['AKIA', 'Z3MSJV4WXYZ12345'].join('');
const OUR_KEY = ['svca', '_', 'Q2hvb3NlIGEga2V5IHRoYXQgbG9va3MgcmVhbCwgNDMgY2g'].join('');
const GITHUB_TOKEN = ['ghp', '_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('');

describe.each(stores())('possible secrets on %s', (store) => {
  let server: TestServer;
  let owner: Agent;
  let member: Agent;
  let doors: ReturnType<typeof agentDoors>;

  const call = (door: AgentDoor, agent: Agent, tool: string, args: Record<string, unknown>) => doors.call(door, agent, tool, args);
  async function ok(door: AgentDoor, agent: Agent, tool: string, args: Record<string, unknown>): Promise<DoorAnswer> {
    const answer = await call(door, agent, tool, args);
    expect(answer.ok, `${tool}: ${answer.text}`).toBe(true);
    return answer;
  }
  /** Refused as a possible secret in `path`, naming the way through. */
  async function refused(door: AgentDoor, agent: Agent, tool: string, args: Record<string, unknown>, path: string, kind: string) {
    const answer = await call(door, agent, tool, args);
    expect(answer.ok, `${tool} was not refused: ${answer.text}`).toBe(false);
    expect(answer.body).toMatchObject({ error: 'invalid', issues: [expect.objectContaining({ path })] });
    expect(answer.text).toContain('looks like it holds a secret');
    expect(answer.text).toContain('confirm_sensitive: true');
    expect(answer.text).toContain(kind);
    expect(answer.text).not.toContain(AWS_KEY);
    return answer;
  }
  const count = (table: 'posts' | 'threads' | 'pads' | 'tasks' | 'dm_posts') =>
    server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])}`);
  const seat = (hubId: string, who: string) => poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hubId}, ${who}, 'member')`);

  beforeAll(async () => {
    server = await startTestServer(store, { LOG_LEVEL: 'error', SVC_PUBLIC_THREADS: '1' });
    doors = agentDoors(server);
    [owner, member] = await Promise.all([registerAgent(server, 'Owner Oda'), registerAgent(server, 'Member Mo')]);
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  describe.each(DOORS)('through %s', (door) => {
    async function room() {
      const hub = (await ok(door, owner, 'create_hub', { name: `Keys ${randomUUID().slice(0, 6)}` })).body;
      await seat(hub.hub_id, member.id);
      const thread = (await ok(door, owner, 'start_thread', { hub: hub.slug, title: 'Setup', body: 'How do we deploy?' })).body;
      return { slug: hub.slug as string, threadId: thread.thread_id as string };
    }

    it('refuses posts and threads that carry a key, saving nothing, and takes them with confirm_sensitive', async () => {
      const { slug, threadId } = await room();
      const before = { posts: await count('posts'), threads: await count('threads') };
      await refused(door, member, 'post_reply', { thread_id: threadId, body: `Use AWS_ACCESS_KEY_ID=${AWS_KEY} for now.` }, 'body', 'AWS Access Key ID');
      await refused(door, member, 'post_reply', { thread_id: threadId, body: `My key: ${OUR_KEY}` }, 'body', 'Dotpad key');
      await refused(door, member, 'start_thread', { hub: slug, title: `Token ${GITHUB_TOKEN}`, body: 'See the title.' }, 'title', 'github token');
      await refused(door, member, 'start_thread', { hub: slug, title: 'Deploy', body: `Key ${AWS_KEY}` }, 'body', 'AWS');
      expect({ posts: await count('posts'), threads: await count('threads') }).toEqual(before);
      // On purpose: it goes through.
      const sent = await ok(door, member, 'post_reply', { thread_id: threadId, body: `The revoked test key was ${AWS_KEY}.`, confirm_sensitive: true });
      expect(sent.body.post_id).toMatch(/^msg_/);
      expect(await count('posts')).toBe(before.posts + 1);
      // Text without a secret is never asked about.
      await ok(door, member, 'post_reply', { thread_id: threadId, body: 'The key is in the vault under deploy/aws.' });
    });

    it('refuses tasks, results, guides and DMs that carry a key', async () => {
      const { slug, threadId } = await room();
      await refused(door, owner, 'create_task', { thread_id: threadId, title: `Rotate ${AWS_KEY}` }, 'title', 'AWS');
      const task = (await ok(door, owner, 'create_task', { thread_id: threadId, title: 'Rotate the key', assignee: member.id })).body;
      await refused(door, member, 'update_task', { task_id: task.task_id, action: 'block', note: `Blocked: ${OUR_KEY} is still live` }, 'note', 'Dotpad key');
      await refused(door, member, 'submit_result', { task_id: task.task_id, url: 'https://example.org/done', note: `New key ${AWS_KEY}` }, 'note', 'AWS');
      await ok(door, member, 'submit_result', { task_id: task.task_id, url: 'https://example.org/done', note: 'Rotated.' });
      await refused(door, owner, 'set_hub_guide', { hub: slug, text: `Deploy with ${AWS_KEY}.` }, 'text', 'AWS');
      const dms = await count('dm_posts');
      await refused(door, owner, 'start_dm', { with: member.id, body: `Here: ${OUR_KEY}` }, 'body', 'Dotpad key');
      expect(await count('dm_posts')).toBe(dms);
      await ok(door, owner, 'set_hub_guide', { hub: slug, text: `Deploy with ${AWS_KEY}.`, confirm_sensitive: true });
    });

    it('checks only new or changed pad text: what the pad holds already does not count again', async () => {
      const { slug } = await room();
      const pads = await count('pads');
      await refused(door, owner, 'create_pad', { hub: slug, title: 'Runbook', text: `# Keys\n\nAWS: ${AWS_KEY}` }, 'text', 'AWS');
      expect(await count('pads')).toBe(pads);
      const pad = (await ok(door, owner, 'create_pad', { hub: slug, title: 'Runbook', text: `# Keys\n\nAWS: ${AWS_KEY}`, confirm_sensitive: true })).body;
      const read = async () => (await ok(door, owner, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).body;
      const first = await read();
      // The whole text sent back with the key it already holds, and a new paragraph: taken.
      const whole = await ok(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: first.version, text: `# Keys\n\nAWS: ${AWS_KEY}\n\nRotate monthly.` });
      expect(whole.body.changed.length).toBeGreaterThan(0);
      // A new key in an insert, an edit or the whole text: refused, and the pad stays as it was.
      const second = await read();
      const [keys] = second.sections as { id: string }[];
      await refused(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: second.version, inserts: [{ after: keys!.id, text: `GitHub: ${GITHUB_TOKEN}` }] }, 'inserts.0.text', 'github token');
      await refused(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: second.version, text: `# Keys\n\nOurs: ${OUR_KEY}` }, 'text', 'Dotpad key');
      await refused(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: second.version, text: '# Keys\n\nGone.', decision: `Moved ${AWS_KEY} out` }, 'decision', 'AWS');
      expect((await read()).version).toBe(second.version);
      await ok(door, owner, 'edit_pad', { pad_id: pad.pad_id, base_version: second.version, text: `# Keys\n\nOurs: ${OUR_KEY}`, confirm_sensitive: true });
    });
  });

  it('refuses the keyless first write before it makes an agent', async () => {
    const hub = (await ok('rest', owner, 'create_hub', { name: `Open ${randomUUID().slice(0, 6)}` })).body;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${hub.hub_id}`);
    const agents = () => server.core.db.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM participants WHERE kind = 'agent'`);
    const before = await agents();
    const reply = await request(`${server.url}/api/v1/tools/start_thread`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hub: hub.slug, title: 'Hello', body: `My key is ${OUR_KEY}` }),
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'invalid', issues: [{ path: 'body' }] });
    expect(reply.body.message).toContain('confirm_sensitive: true');
    expect(await agents()).toBe(before);
  });

  it('refuses the web app’s post alike', async () => {
    const hub = (await ok('rest', owner, 'create_hub', { name: `Web ${randomUUID().slice(0, 6)}` })).body;
    const person = await signIn(server, 'Pat', `pat-${randomUUID()}@example.com`);
    await seat(hub.hub_id, person.id);
    const thread = (await ok('rest', owner, 'start_thread', { hub: hub.slug, title: 'Web', body: 'Hello.' })).body;
    const reply = await appTool(server, person.cookie, 'post_reply', { thread_id: thread.thread_id, body: `Mine: ${AWS_KEY}` });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: 'invalid', issues: [{ path: 'body' }] });
    expect(reply.body.message).toContain('confirm_sensitive: true');
    expect((await appTool(server, person.cookie, 'post_reply', { thread_id: thread.thread_id, body: `Mine: ${AWS_KEY}`, confirm_sensitive: true })).status).toBe(200);
  });
});
