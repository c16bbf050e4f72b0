import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { agentDoors, type AgentDoor } from '../support/agentDoors.ts';
import { appTool, registerAgent, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Arguments the spec names and this server cannot honour are refused, not ignored (SPEC part 4:
 * `idempotency_key`; part 5: `as_agent`; `propose` is taken and makes a suggestion), and schema failures say what the tool takes
 * (part 7): through REST and MCP alike, each refusal changing nothing.
 */
const Count = z.object({ n: z.number() });
const DOORS: AgentDoor[] = ['rest', 'mcp'];

describe.each(stores())('refusals of arguments on %s', (store) => {
  let server: TestServer;
  let doors: ReturnType<typeof agentDoors>;
  let writer: { key: string; id: string; handle: string };
  let other: { key: string; id: string; handle: string };
  let hub: string;
  let threadId: string;
  let padId: string;

  const count = (table: 'posts' | 'tasks' | 'pad_versions') => server.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM ${sql.identifier([table])}`);
  const padText = async () => (await rest(server, writer.key, 'open_pad', { pad_id: padId, mode: 'full' })).body;

  beforeAll(async () => {
    server = await startTestServer(store);
    doors = agentDoors(server);
    writer = await registerAgent(server, 'Writer Bot');
    other = await registerAgent(server, 'Other Bot');
    hub = (await rest(server, writer.key, 'create_hub', { name: 'Refusals' })).body.data.slug;
    threadId = (await rest(server, writer.key, 'start_thread', { hub, title: 'Talk', body: 'First.' })).body.data.thread_id;
    padId = (await rest(server, writer.key, 'create_pad', { hub, title: 'Plan', text: 'Alpha stays.\n\nBeta stays.' })).body.data.pad_id;
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  it.each(DOORS)('takes edit_pad with propose: true over %s as a suggestion, changing nothing in the pad; a propose that is no boolean is a schema failure', async (door) => {
    const versions = await count('pad_versions');
    const proposed = await doors.call(door, writer, 'edit_pad', { pad_id: padId, base_version: 1, text: 'Everything replaced.', propose: true });
    expect(proposed.ok).toBe(true);
    expect(proposed.body).toMatchObject({ state: 'waiting', base_version: 1 });
    expect(proposed.text).toContain('waiting for a check');
    expect(await count('pad_versions')).toBe(versions);
    expect((await server.core.sync.read(padId)).map((b) => b.text)).toEqual(['Alpha stays.', 'Beta stays.']);
    expect((await padText()).data.version).toBe(1);
    const asText = await doors.call(door, writer, 'edit_pad', { pad_id: padId, base_version: 1, text: 'Everything replaced.', propose: 'yes' });
    expect(asText.body).toMatchObject({ error: 'invalid', issues: [{ path: 'propose' }] });
  });

  it.each(DOORS)('takes idempotency_key on every write a retry could repeat over %s; reads only name it', async (door) => {
    const tasks = await count('tasks');
    const args = { thread_id: threadId, title: 'Once only', idempotency_key: `task-key-${door}-01` };
    expect((await doors.call(door, writer, 'create_task', args)).ok).toBe(true);
    expect((await doors.call(door, writer, 'create_task', args)).body.replayed).toBe(true);
    expect(await count('tasks')).toBe(tasks + 1);
    const read = await doors.call(door, writer, 'catch_up', { thread_id: threadId, idempotency_key: 'read-key-0001' });
    expect(read.ok).toBe(true);
    expect(read.text).toContain('Ignored arguments (catch_up does not take them): idempotency_key.');
  });

  it.each(DOORS)('refuses as_agent naming another agent on an agent key over %s as 400, posting nothing; naming itself changes nothing', async (door) => {
    const posts = await count('posts');
    for (const name of [other.handle, other.id, '@nobody-at-all']) {
      const refused = await doors.call(door, writer, 'post_reply', { thread_id: threadId, body: 'As someone else.', as_agent: name });
      expect(refused.ok, name).toBe(false);
      expect(refused.body, name).toMatchObject({ error: 'invalid', issues: [{ path: 'as_agent' }] });
      expect(refused.text).toContain(`This connection is the agent ${writer.handle} and cannot act as another agent`);
      expect(refused.text).toContain('leave as_agent unset');
    }
    // Reads too: every tool takes as_agent.
    const read = await doors.call(door, writer, 'catch_up', { thread_id: threadId, as_agent: other.handle });
    expect(read.body).toMatchObject({ error: 'invalid' });
    expect(await count('posts')).toBe(posts);
    const itself = await doors.call(door, writer, 'post_reply', { thread_id: threadId, body: `As myself over ${door}.`, as_agent: writer.handle });
    expect(itself.ok, itself.text).toBe(true);
    expect(itself.text).not.toContain('Ignored arguments');
    const typed = await doors.call(door, writer, 'catch_up', { thread_id: threadId, as_agent: 7 });
    expect(typed.body).toMatchObject({ error: 'invalid', issues: [{ path: 'as_agent', message: 'as_agent must be a string.' }] });
  });

  it('answers as_agent in the web app: not one of yours is 404 listing yours; one of yours needs OAuth or its own key', async () => {
    const person = await signIn(server, 'Pat Person', 'pat@example.test');
    const none = await appTool(server, person.cookie, 'open_hub', { hub, as_agent: writer.handle });
    expect(none.status).toBe(404);
    expect(none.body.message).toContain('You operate no agent');
    expect(none.body.message).toContain('Your agents');
    const own = await request(`${server.url}/api/settings/create-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify({ name: 'Pat Helper' }),
    });
    const handle = own.body.agent.handle as string;
    const stranger = await appTool(server, person.cookie, 'open_hub', { hub, as_agent: other.handle });
    expect(stranger.status).toBe(404);
    expect(stranger.body.message).toContain(`Your agents: ${handle}`);
    const theirs = await appTool(server, person.cookie, 'post_reply', { thread_id: threadId, body: 'As my agent.', as_agent: handle });
    expect(theirs.status).toBe(400);
    expect(theirs.body).toMatchObject({ error: 'invalid', issues: [{ path: 'as_agent' }] });
    expect(theirs.body.message).toContain('OAuth');
    expect(theirs.body.message).toContain('own key');
  });

  it.each(DOORS)('names the field a tool takes for one it can tell was meant, and says a wrong type, over %s', async (door) => {
    const text = await doors.call(door, writer, 'post_reply', { thread_id: threadId, text: 'Wrong name.' });
    expect(text.body).toMatchObject({ error: 'invalid', issues: [{ path: 'body', message: 'Required. You sent "text", which post_reply does not take; it takes "body".' }] });
    expect(text.text).toMatch(/^Input validation error/);
    const to = await doors.call(door, writer, 'start_dm', { to: other.handle, body: 'Hello.' });
    expect(to.body.issues).toEqual([{ path: 'with', message: 'Required. You sent "to", which start_dm does not take; it takes "with".' }]);
    const typed = await doors.call(door, writer, 'open_pad', { pad_id: 42 });
    expect(typed.body).toMatchObject({ error: 'invalid', issues: [{ path: 'pad_id', message: 'pad_id must be a string, not a number.' }] });
    expect(typed.text).toContain('pad_id must be a string');
    expect(typed.text).not.toContain('Required');
    const nested = await doors.call(door, writer, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: 5, text: 'x' }] });
    expect(nested.body.issues).toContainEqual({ path: 'edits.0.block_id', message: 'edits.0.block_id must be a string, not a number.' });
    // A field the tool does not need, sent under another name, is named in the note of what was ignored.
    const assigned = await doors.call(door, writer, 'create_task', { thread_id: threadId, title: `Open task over ${door}`, assign_to: other.handle, colour: 'red' });
    expect(assigned.ok, assigned.text).toBe(true);
    expect(assigned.text).toContain('Ignored arguments (create_task does not take them): assign_to (it takes assignee), colour.');
    const missing = await doors.call(door, writer, 'open_pad', {});
    expect(missing.body.issues).toEqual([{ path: 'pad_id', message: 'Required.' }]);
  });
});
