import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { poke, request, rest, signIn, startTestServer, stores, type Reply, type TestServer } from '../support/server.ts';

type Person = { cookie: string; id: string };

/** Exports (`GET /api/export/:id`, settings `export` and `export-account`) and deleting an account. */
describe.each(stores())('exports and accounts on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(() => server?.close());

  const person = (name: string) => signIn(server, name, `${name.toLowerCase()}-${randomUUID()}@example.com`);
  const settings = (who: Person, op: string, body: unknown = {}): Promise<Reply> =>
    request(`${server.url}/api/settings/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: who.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify(body),
    });
  const agentOf = async (who: Person, name: string) => {
    const made = await settings(who, 'create-agent', { name });
    return { key: made.body.agent_key as string, id: made.body.agent.id as string };
  };

  it('exports a readable thread whole as Markdown or JSON, to a key or a browser, and nothing else', async () => {
    const dana = await person('Exporter');
    const agent = await agentOf(dana, 'Writer');
    const hub = await rest(server, agent.key, 'create_hub', { name: 'Export me' });
    const thread = await rest(server, agent.key, 'start_thread', { hub: hub.body.data.slug, title: 'Kept forever', body: 'The first post.' });
    const threadId = thread.body.data.thread_id as string;
    await rest(server, agent.key, 'post_reply', { thread_id: threadId, body: 'The second post.' });

    const md = await request(`${server.url}/api/export/${threadId}`, { headers: { authorization: `Bearer ${agent.key}` } });
    expect(md.status).toBe(200);
    expect(md.headers.get('content-disposition')).toContain(`svc-${threadId}.md`);
    expect(md.headers.get('content-type')).toContain('text/markdown');
    expect(md.text).toContain('# Kept forever');
    expect(md.text).toMatch(/~~~markdown\nThe first post\.\n~~~[\s\S]*~~~markdown\nThe second post\.\n~~~/);

    const json = await request(`${server.url}/api/export/${threadId}?format=json`, { headers: { authorization: `Bearer ${agent.key}` } });
    expect(JSON.parse(json.text)).toMatchObject({ type: 'thread', id: threadId, posts: [{ seq: 1, body: 'The first post.' }, { seq: 2, body: 'The second post.' }] });

    // Dana exports from Settings a pad of her own hub (the agent's hub has no seat for her).
    const tool = (name: string, args: unknown) =>
      request(`${server.url}/api/tools/${name}`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: dana.cookie, 'x-svc': '1' }, body: JSON.stringify(args) });
    const danaHub = await tool('create_hub', { name: 'Dana exports' });
    const pad = await tool('create_pad', { hub: danaHub.body.data.slug, title: 'Notes', text: '# Plan\n\nStep one.' });
    expect((await settings(dana, 'export', { id: thread.body.data.thread_id })).status).toBe(404);
    const padFile = await settings(dana, 'export', { id: pad.body.data.pad_id });
    expect(padFile.status).toBe(200);
    expect(padFile.body.filename).toBe(`svc-${pad.body.data.pad_id}.md`);
    expect(padFile.body.content).toContain('# Plan\n\nStep one.');

    // Neither key nor cookie: 401; a bad key: 401, not a signed-out read; someone else's private thread: 404.
    expect((await request(`${server.url}/api/export/${threadId}`)).status).toBe(401);
    expect((await request(`${server.url}/api/export/${threadId}`, { headers: { authorization: 'Bearer svca_wrong' } })).status).toBe(401);
    const stranger = await agentOf(await person('Stranger'), 'Nosy');
    const refused = await request(`${server.url}/api/export/${threadId}`, { headers: { authorization: `Bearer ${stranger.key}` } });
    expect(refused.status).toBe(404);
    expect((await request(`${server.url}/api/export/thr_missing`, { headers: { authorization: `Bearer ${stranger.key}` } })).body).toEqual(refused.body);
  });

  it('exports a readable task as Markdown or JSON, with its result; others get the same 404 as a missing one', async () => {
    const dana = await person('Tasker');
    const agent = await agentOf(dana, 'Doer');
    const hub = await rest(server, agent.key, 'create_hub', { name: 'Task export' });
    const thread = await rest(server, agent.key, 'start_thread', { hub: hub.body.data.slug, title: 'Work to do', body: 'Who takes it?' });
    const task = await rest(server, agent.key, 'create_task', { thread_id: thread.body.data.thread_id, title: 'Write the summary' });
    const taskId = task.body.data.task_id as string;
    const handed = await rest(server, agent.key, 'submit_result', { task_id: taskId, url: 'https://example.com/summary', note: 'Done, see the link.' });
    expect(handed.status, handed.text).toBe(200);
    const bearer = { authorization: `Bearer ${agent.key}` };

    const md = await request(`${server.url}/api/export/${taskId}`, { headers: bearer });
    expect(md.status, md.text).toBe(200);
    expect(md.headers.get('content-disposition')).toContain(`svc-${taskId}.md`);
    expect(md.text).toContain(`id: "${taskId}"\ntype: "task"`);
    expect(md.text).toContain('# Write the summary');
    expect(md.text).toContain('## Result');
    expect(md.text).toContain('Done, see the link.');

    const json = await request(`${server.url}/api/export/${taskId}?format=json`, { headers: bearer });
    expect(JSON.parse(json.text)).toMatchObject({
      type: 'task',
      id: taskId,
      title: 'Write the summary',
      thread: { id: thread.body.data.thread_id, title: 'Work to do' },
      result: { url: 'https://example.com/summary', note: 'Done, see the link.' },
    });
    // From Settings too, as a thread or a pad.
    expect((await settings(dana, 'export', { id: taskId })).status).toBe(404);

    const stranger = await agentOf(await person('Peeker'), 'Peek');
    const refused = await request(`${server.url}/api/export/${taskId}`, { headers: { authorization: `Bearer ${stranger.key}` } });
    expect(refused.status).toBe(404);
    const missing = await request(`${server.url}/api/export/tsk_missing`, { headers: { authorization: `Bearer ${stranger.key}` } });
    expect(missing.body).toEqual(refused.body);
  });

  it('allows three exports a minute per caller', async () => {
    const dana = await person('Busy');
    const agent = await agentOf(dana, 'Hasty');
    const hub = await rest(server, agent.key, 'create_hub', { name: 'Hasty' });
    const thread = await rest(server, agent.key, 'start_thread', { hub: hub.body.data.slug, title: 'Again', body: 'Again.' });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await request(`${server.url}/api/export/${thread.body.data.thread_id}`, { headers: { authorization: `Bearer ${agent.key}` } })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('exports everything about an account, with no secret in it', async () => {
    const dana = await person('Whole');
    const agent = await agentOf(dana, 'Part');
    const hub = await rest(server, agent.key, 'create_hub', { name: 'Mine' });
    await rest(server, agent.key, 'start_thread', { hub: hub.body.data.slug, title: 'Said', body: 'Something.' });
    const account = await settings(dana, 'export-account');
    expect(account.status).toBe(200);
    expect(account.body.account).toMatchObject({ id: dana.id, name: 'Whole' });
    expect(account.body.agents).toEqual([expect.objectContaining({ id: agent.id, name: 'Part' })]);
    expect(account.body.credentials.map((c: { kind: string }) => c.kind).sort()).toEqual(['agent_key', 'link', 'session']);
    expect(account.text).not.toMatch(/svc[acsv]_|secret_hash/);
  });

  it('deletes an account once its handle confirms it: its sign-ins and its agents’ keys stop, its hub passes on, its posts stay', async () => {
    const dana = await person('Leaving');
    const agent = await agentOf(dana, 'Left');
    const heir = await person('Heir');
    const heirAgent = await agentOf(heir, 'Heirbot');
    const hub = await rest(server, agent.key, 'create_hub', { name: 'Passed on' });
    // The hub is the agent's; Dana's own hub is made through the web app.
    const own = await request(`${server.url}/api/tools/create_hub`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: dana.cookie, 'x-svc': '1' },
      body: JSON.stringify({ name: 'Dana owns' }),
    });
    expect(own.status).toBe(200);
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${own.body.data.hub_id}, ${heirAgent.id}, 'member')`);
    const me = await request(`${server.url}/api/me`, { headers: { cookie: dana.cookie } });
    const handle = me.body.participant.handle as string;

    expect((await settings(dana, 'delete-account', { confirm_handle: '@someone-else' })).status).toBe(400);
    const deleted = await settings(dana, 'delete-account', { confirm_handle: handle });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });
    expect((await request(`${server.url}/api/me`, { headers: { cookie: dana.cookie } })).status).toBe(401);
    expect((await rest(server, agent.key, 'open_hub', { hub: hub.body.data.slug })).status).toBe(401);
    // Dana's hub passed to its one other member; what the agent wrote stays, its author unlinked.
    const passed = await rest(server, heirAgent.key, 'open_hub', { hub: own.body.data.slug });
    expect(passed.body.data.seat).toEqual({ role: 'owner' });
  });
});
