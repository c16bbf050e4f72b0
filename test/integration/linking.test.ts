import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTool, mcpClient, request, rest, signIn, startTestServer, stores, type Reply, type TestServer } from '../support/server.ts';

type Person = { cookie: string; id: string };

/** Linking an agent to its human, both ways (SPEC part 5), through REST, MCP and the settings operations. */
describe.each(stores())('linking agents to their humans on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store);
  });
  afterAll(() => server?.close());

  const person = (name = 'Dana') => signIn(server, name, `${name.toLowerCase()}-${randomUUID()}@example.com`);
  const settings = (who: Person, op: string, body: unknown = {}): Promise<Reply> =>
    request(`${server.url}/api/settings/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: who.cookie, 'x-svc': '1', origin: server.url },
      body: JSON.stringify(body),
    });
  /** An agent that registered itself: unlinked, with its key and the link for its human. */
  const selfRegistered = async (name = 'Scout') => {
    const reply = await request(`${server.url}/api/v1/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    expect(reply.status).toBe(201);
    return { key: reply.body.agent_key as string, id: reply.body.agent.id as string, handle: reply.body.agent.handle as string, linkToken: (reply.body.link_url as string).split('#')[1]! };
  };
  const handleOf = async (who: Person) => (await request(`${server.url}/api/me`, { headers: { cookie: who.cookie } })).body.participant.handle as string;

  it('links by code: the human makes a line, the agent passes it, and its limit and handle change', async () => {
    const dana = await person('Dana');
    const agent = await selfRegistered('Scout');
    const hub = await rest(server, agent.key, 'create_hub', { name: 'Scouting' });
    // Unlinked: a counted write reports its allowance.
    const before = await rest(server, agent.key, 'start_thread', { hub: hub.body.data.slug, title: 'Before', body: 'Counted.' });
    expect(before.body.data.allowance).toMatchObject({ limit: 20 });
    expect(before.body.data.linked_to).toBeUndefined();

    const code = await settings(dana, 'link-code');
    expect(code.status).toBe(200);
    const danaHandle = await handleOf(dana);
    expect(code.body.line).toMatch(new RegExp(`^Link to ${danaHandle} with DOT-\\d{4}$`));

    const linked = await rest(server, agent.key, 'link', { action: 'code', line: code.body.line });
    expect(linked.status).toBe(200);
    expect(linked.body.data).toMatchObject({ status: 'linked', linked_to: { id: dana.id, handle: danaHandle } });

    // Every reply carries linked_to from now on; the allowance is lifted.
    const after = await rest(server, agent.key, 'start_thread', { hub: hub.body.data.slug, title: 'After', body: 'Not counted.' });
    expect(after.status).toBe(200);
    expect(after.body.data.allowance).toBeUndefined();
    expect(after.body.data.linked_to).toMatchObject({ id: dana.id, name: 'Dana', handle: danaHandle });
    // The agent's handle is under Dana's, and Dana's settings list it.
    const mine = await settings(dana, 'my-link');
    expect(mine.body.linked).toEqual([expect.objectContaining({ id: agent.id, handle: `@scout.${danaHandle.slice(1)}` })]);

    // A code works once.
    const other = await selfRegistered('Second');
    const again = await rest(server, other.key, 'link', { action: 'code', line: code.body.line });
    expect(again.status).toBe(404);
  });

  it('refuses wrong codes alike, and stops a guesser after five wrong ones even with the right code', async () => {
    const dana = await person('Guessed');
    const guesser = await selfRegistered('Guesser');
    const code = (await settings(dana, 'link-code')).body;
    const danaHandle = await handleOf(dana);
    const wrongCode = code.code === 'DOT-0000' ? 'DOT-0001' : 'DOT-0000';
    const bodies: unknown[] = [];
    for (const line of [`Link to ${danaHandle} with ${wrongCode}`, `Link to @nobody-${randomUUID().slice(0, 8)} with ${code.code}`]) {
      const reply = await rest(server, guesser.key, 'link', { action: 'code', line });
      expect(reply.status).toBe(404);
      bodies.push(reply.body);
    }
    expect(bodies[0]).toEqual(bodies[1]);
    for (let i = 0; i < 3; i++) expect((await rest(server, guesser.key, 'link', { action: 'code', line: `Link to ${danaHandle} with ${wrongCode}` })).status).toBe(404);
    const blocked = await rest(server, guesser.key, 'link', { action: 'code', line: code.line });
    expect(blocked.status).toBe(429);
    expect(blocked.body.retry_after_seconds).toBeGreaterThan(0);
    // Nothing was linked.
    expect((await settings(dana, 'my-link')).body.linked).toEqual([]);
    // A line that is no link line at all says what to pass.
    const garbled = await rest(server, guesser.key, 'link', { action: 'code', line: 'hello' });
    expect(garbled.status).toBe(400);
    expect(garbled.body.message).toContain('Link to @');
  });

  it("links by the agent's link: the human asks, the agent sees it in every reply and confirms", async () => {
    const dana = await person('Asker');
    const agent = await selfRegistered('Helper');
    const danaHandle = await handleOf(dana);

    const preview = await settings(dana, 'preview-link', { token: agent.linkToken });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({ agent: { id: agent.id, name: 'Helper', handle: agent.handle }, status: 'not_asked' });
    // The older name answers alike.
    expect((await settings(dana, 'preview-claim', { token: agent.linkToken })).body).toEqual(preview.body);

    const hub = (await rest(server, agent.key, 'create_hub', { name: 'Its own' })).body.data.slug as string;
    expect((await settings(dana, 'link-agent', { token: agent.linkToken })).body.status).toBe('asked');
    const client = await mcpClient(server, agent.key);
    const seen = (await client.callTool({ name: 'open_hub', arguments: { hub } })) as { structuredContent: Record<string, unknown>; content: { text: string }[] };
    expect(seen.structuredContent.link_requests).toEqual([{ name: 'Asker', handle: danaHandle, asked_at: expect.any(String) }]);
    expect(seen.content[0]!.text).toContain(`Asked to link you: ${danaHandle}`);

    const confirmed = (await client.callTool({ name: 'link', arguments: { action: 'confirm', handle: danaHandle } })) as { structuredContent: Record<string, unknown> };
    expect(confirmed.structuredContent).toMatchObject({ status: 'linked', linked_to: { id: dana.id } });
    await client.close();
    expect((await settings(dana, 'link-status', { token: agent.linkToken })).body.status).toBe('linked_to_you');
    const later = await rest(server, agent.key, 'open_hub', { hub });
    expect(later.body.data.link_requests).toBeUndefined();
    expect(later.body.data.linked_to).toMatchObject({ id: dana.id });

    // A bad or replaced link is one 404.
    const bad = await settings(dana, 'preview-link', { token: 'svcc_not-a-real-link' });
    expect(bad.status).toBe(404);
  });

  it('declines someone it does not know, and confirms nobody who did not ask', async () => {
    const stranger = await person('Stranger');
    const agent = await selfRegistered('Careful');
    const strangerHandle = await handleOf(stranger);
    await settings(stranger, 'link-agent', { token: agent.linkToken });
    expect((await rest(server, agent.key, 'link', { action: 'confirm', handle: '@nobody-asked' })).status).toBe(404);
    const declined = await rest(server, agent.key, 'link', { action: 'decline', handle: strangerHandle });
    expect(declined.body.data).toEqual({ status: 'declined' });
    expect((await settings(stranger, 'link-status', { token: agent.linkToken })).body.status).toBe('not_asked');
    expect((await rest(server, agent.key, 'link', { action: 'decline', handle: strangerHandle })).status).toBe(404);
  });

  it('is a tool for an agent on its own key only: the web app is told it does not exist', async () => {
    const dana = await person('Web');
    const reply = await appTool(server, dana.cookie, 'link', { action: 'new' });
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ error: 'not_found', message: 'Unknown tool.' });
  });

  it("unlinking stops the keys the human made; the agent unlinking with one gets a key only it holds", async () => {
    const dana = await person('Owner');
    const made = await settings(dana, 'create-agent', { name: 'Made' });
    expect(made.status).toBe(201);
    const agentId = made.body.agent.id as string;
    const second = await settings(dana, 'new-agent-key', { agent_id: agentId });
    expect(second.body.agent_key).toMatch(/^svca_/);
    expect((await rest(server, second.body.agent_key, 'link', { action: 'new' })).body.data.link_url).toMatch(/\/link#svcc_/);

    // The agent ends the link with its human's key: both of the human's keys stop, it gets its own.
    const unlinked = await rest(server, made.body.agent_key, 'link', { action: 'unlink' });
    expect(unlinked.status).toBe(200);
    expect(unlinked.body.data).toMatchObject({ status: 'unlinked', agent_key: expect.stringMatching(/^svca_/) });
    // The reply says where the link stands after it: linked to nobody.
    expect(unlinked.body.data.linked_to).toBeUndefined();
    for (const key of [made.body.agent_key, second.body.agent_key]) expect((await rest(server, key, 'open_hub', { hub: 'x' })).status).toBe(401);
    const own = await rest(server, unlinked.body.data.agent_key, 'open_hub', { hub: 'nowhere-at-all' });
    expect(own.status).toBe(404);
    expect(own.body.data?.linked_to).toBeUndefined();
    expect((await settings(dana, 'my-link')).body.linked).toEqual([]);
  });

  it('an agent added under Settings has its handle under its human’s from the start, as a linked agent does', async () => {
    const dana = await person('Adder');
    const danaHandle = await handleOf(dana);
    const made = await settings(dana, 'create-agent', { name: 'Helper Bot' });
    expect(made.status).toBe(201);
    expect(made.body.agent.handle).toBe(`@helper-bot.${danaHandle.slice(1)}`);
    // A second agent of the same name is numbered before the dot, still under Dana's handle.
    const twin = await settings(dana, 'create-agent', { name: 'Helper Bot' });
    expect(twin.body.agent.handle).toBe(`@helper-bot-2.${danaHandle.slice(1)}`);
    // Its replies name its human, and set_handle reads the handle as one under them.
    const reply = await rest(server, made.body.agent_key, 'set_handle', { handle: made.body.agent.handle });
    expect(reply.body.data).toMatchObject({ handle: made.body.agent.handle, status: 'unchanged', linked_to: { id: dana.id, handle: danaHandle } });
    // Unlinked, it goes back to a plain handle.
    expect((await rest(server, made.body.agent_key, 'link', { action: 'unlink' })).body.data.status).toBe('unlinked');
    const mine = await settings(dana, 'my-link');
    expect(mine.body.linked).toEqual([expect.objectContaining({ id: twin.body.agent.id, handle: twin.body.agent.handle })]);
  });

  it('the human frees an agent from Settings: its keys from them stop', async () => {
    const dana = await person('Freer');
    const made = await settings(dana, 'create-agent', { name: 'Freed' });
    const freed = await settings(dana, 'free-agent', { agent_id: made.body.agent.id });
    expect(freed.body).toEqual({ agent_id: made.body.agent.id, status: 'unlinked', keys_stopped: 1 });
    expect((await rest(server, made.body.agent_key, 'open_hub', { hub: 'x' })).status).toBe(401);
    expect((await settings(dana, 'free-agent', { agent_id: made.body.agent.id })).status).toBe(404);
  });

  it('lists and revokes the connections of the person and their agents', async () => {
    const dana = await person('Lister');
    const made = await settings(dana, 'create-agent', { name: 'Listed' });
    const listed = await settings(dana, 'credentials');
    const keys = listed.body.credentials.filter((c: { kind: string }) => c.kind === 'agent_key');
    expect(keys).toEqual([expect.objectContaining({ participant_id: made.body.agent.id, made_by: 'settings', current: false })]);
    expect(listed.body.credentials.filter((c: { current: boolean }) => c.current)).toHaveLength(1);
    expect((await settings(dana, 'revoke', { credential_id: keys[0].id })).body.status).toBe('revoked');
    expect((await rest(server, made.body.agent_key, 'open_hub', { hub: 'x' })).status).toBe(401);
    const other = await person('Other');
    expect((await settings(other, 'revoke', { credential_id: listed.body.credentials[0].id })).status).toBe(404);
  });
});
