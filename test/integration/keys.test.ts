import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { authenticateBearer } from '../../server/core/identity/credentials.ts';
import { revokeCredentials } from '../../server/core/identity/keys.ts';
import { liveCredentials, mcpClient, openProvider, poke, registerAgent, request, rest, signIn, appTool, startTestServer, stores, type TestServer } from '../support/server.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Keys, sub-agent keys and handles (SPEC parts 2, 3, 4 "Linking and keys" and 8), through every door. */
describe.each(stores())('keys, sub-agents and handles on %s', (store) => {
  let server: TestServer;
  let owner: { key: string; id: string; handle: string };
  let hub: { id: string; slug: string };
  let granted: string;
  let other: string;
  let padAlone: string;
  let padOther: string;
  let padBeside: string;
  const closers: (() => void)[] = [];

  const credentialOf = async (key: string) => (await authenticateBearer(server.core, key)).credentialId;
  const expiryOf = (id: string) => server.core.db.pool.oneFirst(sql.type(z.object({ t: z.number() }))`SELECT expires_at AS t FROM credentials WHERE id = ${id}`);
  const seat = (participant: string) => poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${participant}, 'member')`);
  const markdown = (path: string, key: string) => request(`${server.url}${path}?format=md`, { headers: { authorization: `Bearer ${key}` } });
  const mint = async (key: string, args: Record<string, unknown>) => rest(server, key, 'mint_subagent', args);

  beforeAll(async () => {
    server = await startTestServer(store);
    owner = await registerAgent(server, 'Key Owner');
    const created = await rest(server, owner.key, 'create_hub', { name: 'Keys hub' });
    hub = { id: created.body.data.hub_id, slug: created.body.data.slug };
    const thread = async (title: string) => (await rest(server, owner.key, 'start_thread', { hub: hub.slug, title, body: `${title}, first.` })).body.data.thread_id as string;
    granted = await thread('Granted');
    other = await thread('Other');
    const pad = async (where: Record<string, string>, title: string) =>
      (await rest(server, owner.key, 'create_pad', { ...where, title, text: `${title} text.` })).body.data.pad_id as string;
    padAlone = await pad({ hub: hub.slug }, 'Named pad');
    padOther = await pad({ hub: hub.slug }, 'Other pad');
    padBeside = await pad({ thread_id: granted }, 'Beside');
  });
  afterAll(async () => {
    for (const close of closers) close();
    await server?.close();
  });

  it('rotate_key over MCP and POST /api/v1/agents/key renew the key; the old one works one more hour; 5 a day', async () => {
    const agent = await registerAgent(server, 'Renewer');
    const first = await credentialOf(agent.key);
    const client = await mcpClient(server, agent.key);
    const viaMcp = await client.callTool({ name: 'rotate_key', arguments: {} });
    await client.close();
    expect(viaMcp.isError).toBeFalsy();
    const data = viaMcp.structuredContent as Record<string, string>;
    expect(data).toMatchObject({ status: 'rotated', agent_key: expect.stringMatching(/^svca_[A-Za-z0-9_-]{43}$/) });
    expect(Date.parse(data.key_expires_at!) - Date.now()).toBeGreaterThan(89 * DAY);
    expect(Date.parse(data.previous_key_expires_at!) - Date.now()).toBeLessThanOrEqual(HOUR);
    expect(await expiryOf(first)).toBe(Date.parse(data.previous_key_expires_at!));

    // Both keys work: the old one for its last hour.
    expect((await rest(server, agent.key, 'create_hub', { name: 'With the old key' })).status).toBe(200);
    expect((await rest(server, data.agent_key, 'create_hub', { name: 'With the new key' })).status).toBe(200);

    const renew = (key: string) => request(`${server.url}/api/v1/agents/key`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    let key = data.agent_key!;
    for (let n = 2; n <= 5; n++) {
      const reply = await renew(key);
      expect(reply.status).toBe(200);
      expect(reply.body.api).toBe('1');
      // What the spec names, beside what every reply may carry (linked_to).
      expect(Object.keys(reply.body.data).filter((field) => field !== 'linked_to').sort()).toEqual(['agent_key', 'key_expires_at', 'previous_key_expires_at', 'status']);
      expect(reply.body.text).toContain('shown only now');
      key = reply.body.data.agent_key;
    }
    const sixth = await renew(key);
    expect(sixth.status).toBe(429);
    expect(sixth.body.error).toBe('rate_limited');
    expect(sixth.body.retry_after_seconds).toBeGreaterThan(23 * 3600);
    // The refused renewal changed nothing: the key it was made with still has its 90 days.
    expect((await rest(server, key, 'create_hub', { name: 'Still good' })).body.data.key_expires_at).toBeUndefined();
  });

  it('a key in its last 14 days carries key_expires_at in every reply, MCP and REST; a renewal answers with the new one', async () => {
    const agent = await registerAgent(server, 'Ageing');
    const soon = Date.now() + 10 * DAY;
    // Before the key is first used, so no instance holds its lookup.
    await poke(server, sql.unsafe`UPDATE credentials SET expires_at = ${new Date(soon).toISOString()} WHERE participant_id = ${agent.id} AND kind = 'agent_key'`);
    const viaRest = await rest(server, agent.key, 'create_hub', { name: 'Ageing hub' });
    expect(Math.abs(Date.parse(viaRest.body.data.key_expires_at) - soon)).toBeLessThan(1000);
    expect(viaRest.body.text).toContain('rotate_key');
    const client = await mcpClient(server, agent.key);
    const viaMcp = await client.callTool({ name: 'open_hub', arguments: { hub: viaRest.body.data.slug } });
    await client.close();
    expect((viaMcp.structuredContent as Record<string, unknown>).key_expires_at).toBe(viaRest.body.data.key_expires_at);
    const rotated = await rest(server, agent.key, 'rotate_key', {});
    expect(Date.parse(rotated.body.data.key_expires_at) - Date.now()).toBeGreaterThan(89 * DAY);
    // A key far from its end says nothing of it.
    expect((await rest(server, owner.key, 'open_hub', { hub: hub.slug })).body.data.key_expires_at).toBeUndefined();
  });

  it('the four agent-key-only tools are unknown to a web session, exactly as a tool that does not exist', async () => {
    const person = await signIn(server, 'Web Person', `web-${store}@example.com`);
    const unknown = await appTool(server, person.cookie, 'no_such_tool', {});
    expect(unknown.status).toBe(404);
    for (const name of ['link', 'rotate_key', 'set_handle', 'mint_subagent']) {
      const reply = await appTool(server, person.cookie, name, {});
      expect([name, reply.status, reply.body]).toEqual([name, 404, unknown.body]);
    }
    expect(unknown.body).toEqual({ error: 'not_found', message: 'Unknown tool.' });
  });

  it('a sub-agent key works in its threads and pads and sees everything else as missing, on REST, MCP, Markdown and /sync', async () => {
    const minted = await mint(owner.key, { thread_ids: [granted], pad_ids: [padAlone] });
    expect(minted.status).toBe(200);
    expect(minted.body.data).toMatchObject({ status: 'minted', thread_ids: [granted], pad_ids: [padAlone], read_only: false });
    const sub = minted.body.data.agent_key as string;
    expect(Date.parse(minted.body.data.key_expires_at) - Date.now()).toBeGreaterThan(23.9 * HOUR);
    expect(Date.parse(minted.body.data.key_expires_at) - Date.now()).toBeLessThanOrEqual(24 * HOUR);

    // Inside the grant: the parent's rights, and the parent's name on what it writes.
    expect((await rest(server, sub, 'open_thread', { thread_id: granted })).status).toBe(200);
    const posted = await rest(server, sub, 'post_reply', { thread_id: granted, body: 'From the sub-agent.' });
    expect(posted.status).toBe(200);
    const author = await server.core.db.pool.oneFirst(sql.type(z.object({ author_id: z.string() }))`SELECT author_id FROM posts WHERE id = ${posted.body.data.post_id}`);
    expect(author).toBe(owner.id);
    expect((await rest(server, sub, 'open_pad', { pad_id: padAlone })).status).toBe(200);
    expect((await rest(server, sub, 'open_pad', { pad_id: padBeside })).status).toBe(200);
    // A sub-agent's replies say when its key ends, and who can make another.
    expect((await rest(server, sub, 'open_pad', { pad_id: padAlone })).body.text).toContain('the agent that made it can mint another');

    // Outside it, over REST: exactly what a missing thread, pad or hub answers.
    const missingThread = await rest(server, owner.key, 'open_thread', { thread_id: 'thr_00000000000000000000' });
    const missingPad = await rest(server, owner.key, 'open_pad', { pad_id: 'pad_00000000000000000000' });
    const missingHub = await rest(server, owner.key, 'open_hub', { hub: 'no-such-hub' });
    for (const [call, args, missing] of [
      ['open_thread', { thread_id: other }, missingThread],
      ['post_reply', { thread_id: other, body: 'Sneaking in.' }, missingThread],
      ['open_pad', { pad_id: padOther }, missingPad],
      ['open_hub', { hub: hub.slug }, missingHub],
    ] as const) {
      const reply = await rest(server, sub, call, args);
      expect([call, reply.status, reply.body]).toEqual([call, 404, missing.body]);
    }
    expect((await rest(server, sub, 'create_hub', { name: 'Own hub' })).body.error).toBe('forbidden');

    // Over MCP.
    const client = await mcpClient(server, sub);
    const viaMcp = await client.callTool({ name: 'open_thread', arguments: { thread_id: other } });
    const inside = await client.callTool({ name: 'open_thread', arguments: { thread_id: granted } });
    await client.close();
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.structuredContent).toEqual(missingThread.body);
    expect(inside.isError).toBeFalsy();

    // Markdown views.
    const missingView = await markdown('/t/thr_00000000000000000000', sub);
    expect(missingView.status).toBe(404);
    expect((await markdown(`/t/${granted}`, sub)).status).toBe(200);
    const otherView = await markdown(`/t/${other}`, sub);
    expect([otherView.status, otherView.text]).toEqual([404, missingView.text]);
    expect((await markdown(`/p/${padOther}`, sub)).status).toBe(404);
    expect((await markdown(`/p/${padBeside}`, sub)).status).toBe(200);
    expect((await markdown(`/h/${hub.slug}`, sub)).status).toBe(404);
    // The parent itself still reads all of it.
    expect((await markdown(`/t/${other}`, owner.key)).status).toBe(200);
    // Exports, the same.
    const exported = (id: string) => request(`${server.url}/api/export/${id}?format=md`, { headers: { authorization: `Bearer ${sub}` } });
    expect((await exported(granted)).status).toBe(200);
    const [outside, nowhere] = [await exported(other), await exported('thr_00000000000000000000')];
    expect([outside.status, outside.body]).toEqual([404, nowhere.body]);

    // /sync: a pad outside the grant is refused as a missing one; one inside syncs.
    const refused = await openProvider(server, padOther, sub);
    const missingLive = await openProvider(server, 'pad_00000000000000000000', sub);
    const allowed = await openProvider(server, padBeside, sub);
    closers.push(() => refused.close(), () => missingLive.close(), () => allowed.close());
    await allowed.synced;
    expect(allowed.text()).toBe('Beside text.');
    await expect.poll(() => refused.denied()).not.toBeNull();
    await expect.poll(() => missingLive.denied()).not.toBeNull();
    expect(refused.denied()).toBe(missingLive.denied());
    expect(refused.text()).toBe('');
  });

  it('a read-only sub-agent key reads but writes nothing', async () => {
    const minted = await mint(owner.key, { thread_ids: [granted], read_only: true });
    const sub = minted.body.data.agent_key as string;
    expect(minted.body.data.read_only).toBe(true);
    expect((await rest(server, sub, 'open_thread', { thread_id: granted })).status).toBe(200);
    const refused = await rest(server, sub, 'post_reply', { thread_id: granted, body: 'Read-only writes?' });
    expect([refused.status, refused.body.error]).toEqual([403, 'forbidden']);
    const client = await mcpClient(server, sub);
    const edit = await client.callTool({ name: 'edit_pad', arguments: { pad_id: padBeside, base_version: 1, text: 'Overwritten.' } });
    await client.close();
    expect(edit.isError).toBe(true);
    expect((edit.structuredContent as { error: string }).error).toBe('forbidden');
    expect((await server.core.sync.read(padBeside)).map((b) => b.text)).toEqual(['Beside text.']);
    // Its live connection to a pad of the thread is a read-only one.
    const live = await openProvider(server, padBeside, sub);
    closers.push(() => live.close());
    await live.synced;
    const credential = await credentialOf(sub);
    const connections = server.core.sync.hocuspocus.documents.get(padBeside)!.getConnections();
    expect(connections.filter((c) => c.context.credentialId === credential).map((c) => c.readOnly)).toEqual([true]);
  });

  it('sub-agent keys: never past the parent key, 10 live and 30 an hour, no minting of their own, and they end with the parent key', async () => {
    const parent = await registerAgent(server, 'Parent');
    await seat(parent.id);
    // The parent key has two hours left, set before it is first used.
    const parentEnds = Date.now() + 2 * HOUR;
    await poke(server, sql.unsafe`UPDATE credentials SET expires_at = ${new Date(parentEnds).toISOString()} WHERE participant_id = ${parent.id} AND kind = 'agent_key'`);
    const first = await mint(parent.key, { thread_ids: [granted], hours: 168 });
    expect(Date.parse(first.body.data.key_expires_at)).toBeLessThanOrEqual(parentEnds);
    const sub = first.body.data.agent_key as string;

    // A sub-agent key cannot make keys, renew itself or pick a handle.
    for (const [name, args] of [['mint_subagent', { thread_ids: [granted] }], ['rotate_key', {}], ['set_handle', { handle: '@sneaky' }]] as const) {
      const reply = await rest(server, sub, name, args);
      expect([name, reply.status, reply.body.error]).toEqual([name, 403, 'forbidden']);
    }
    // Nothing the parent cannot read, and something must be named.
    expect((await mint(parent.key, { thread_ids: ['thr_00000000000000000000'] })).status).toBe(404);
    expect((await mint(parent.key, {})).status).toBe(400);
    expect((await mint(parent.key, { pad_ids: [padOther], hours: 169 })).status).toBe(400);

    for (let n = 2; n <= 10; n++) expect([n, (await mint(parent.key, { pad_ids: [padOther], hours: 1 })).status]).toEqual([n, 200]);
    const eleventh = await mint(parent.key, { pad_ids: [padOther] });
    expect([eleventh.status, eleventh.body.error]).toEqual([429, 'rate_limited']);
    expect(eleventh.body.message).toContain('10 live');

    // Ended keys are no longer live, but they were made this hour: 30 an hour.
    await poke(server, sql.unsafe`UPDATE credentials SET revoked_at = now() WHERE participant_id = ${parent.id} AND origin = 'subagent' AND id <> ${await credentialOf(sub)}`);
    for (let n = 11; n <= 30; n++) {
      const reply = await mint(parent.key, { pad_ids: [padOther], hours: 1 });
      expect([n, reply.status]).toEqual([n, 200]);
      if (n % 9 === 0) await poke(server, sql.unsafe`UPDATE credentials SET revoked_at = now() WHERE participant_id = ${parent.id} AND origin = 'subagent' AND id <> ${await credentialOf(sub)}`);
    }
    const thirtyFirst = await mint(parent.key, { pad_ids: [padOther] });
    expect([thirtyFirst.status, thirtyFirst.body.error]).toEqual([429, 'rate_limited']);
    expect(thirtyFirst.body.message).toContain('30 sub-agent keys an hour');

    // Revoking the parent key ends the sub-agent key with it.
    expect((await rest(server, sub, 'open_thread', { thread_id: granted })).status).toBe(200);
    await revokeCredentials(server.core, [await credentialOf(parent.key)]);
    const after = await rest(server, sub, 'open_thread', { thread_id: granted });
    expect([after.status, after.body.error]).toEqual([401, 'unauthenticated']);
    expect(after.body.message).toContain('revoked');
  });

  it('set_handle: plain or under the human, unique without case, 5 a day; old handles keep resolving and cannot be taken', async () => {
    const agent = await registerAgent(server, 'Handle Changer');
    const rival = await registerAgent(server, 'Handle Rival');
    const unlinked = await registerAgent(server, 'Loner', { unlinked: true });
    const human = await server.core.db.pool.oneFirst(sql.type(z.object({ handle: z.string() }))`
      SELECT h.handle FROM participants a JOIN participants h ON h.id = a.linked_human WHERE a.id = ${agent.id}`);

    const client = await mcpClient(server, agent.key);
    const first = await client.callTool({ name: 'set_handle', arguments: { handle: '@Scout' } });
    await client.close();
    expect(first.structuredContent).toMatchObject({ handle: '@Scout', previous_handle: agent.handle, status: 'changed', changes_left: 4 });

    const clash = await rest(server, rival.key, 'set_handle', { handle: 'scout' });
    expect([clash.status, clash.body.error]).toEqual([409, 'conflict']);
    // A newcomer's derived handle steps around the old one.
    const namesake = await registerAgent(server, 'Handle Changer');
    expect(namesake.handle.toLowerCase()).not.toBe(agent.handle.toLowerCase());

    const under = await rest(server, agent.key, 'set_handle', { handle: `@scout.${human.slice(1).toUpperCase()}` });
    expect(under.body.data).toMatchObject({ handle: `@scout${human.replace('@', '.')}`, previous_handle: '@Scout', status: 'changed' });
    // The old handle stays the agent's: nobody else may take it.
    const taken = await rest(server, rival.key, 'set_handle', { handle: '@scout' });
    expect([taken.status, taken.body.error]).toEqual([409, 'conflict']);
    const wrongHuman = await rest(server, agent.key, 'set_handle', { handle: '@scout.someone-else' });
    expect([wrongHuman.status, wrongHuman.body.issues?.[0]?.path]).toEqual([400, 'handle']);
    const notLinked = await rest(server, unlinked.key, 'set_handle', { handle: '@loner.anyone' });
    expect([notLinked.status, notLinked.body.message]).toEqual([400, expect.stringContaining('link first')]);
    expect((await rest(server, unlinked.key, 'set_handle', { handle: '@bad handle!' })).status).toBe(400);

    // Every handle it had still names it; a handle nobody had names nobody.
    const { resolveParticipant } = await import('../../server/core/identity/handles.ts');
    for (const old of [agent.handle, '@SCOUT', under.body.data.handle, agent.id]) {
      expect([old, (await resolveParticipant(server.core.db.pool, old))?.id]).toEqual([old, agent.id]);
    }
    expect(await resolveParticipant(server.core.db.pool, '@nobody-ever')).toBeNull();
    // A handle changed by any other way (linking, Settings) keeps resolving too.
    await poke(server, sql.unsafe`UPDATE participants SET handle = '@rival-moved' WHERE id = ${rival.id}`);
    expect((await resolveParticipant(server.core.db.pool, rival.handle))?.id).toBe(rival.id);

    // Five changes a day: two made, three more, then refused.
    for (const name of ['@one', '@two', '@three']) expect((await rest(server, agent.key, 'set_handle', { handle: name })).status).toBe(200);
    const sixth = await rest(server, agent.key, 'set_handle', { handle: '@four' });
    expect([sixth.status, sixth.body.error]).toEqual([429, 'rate_limited']);
    // Setting the handle it has is no change, and costs nothing.
    expect((await rest(server, agent.key, 'set_handle', { handle: '@three' })).body.data.status).toBe('unchanged');
  });
  it('a participant named by an earlier handle is found: a link line naming the human by an old handle links', async () => {
    const person = await signIn(server, 'Renamed Person', `renamed-${store}@example.com`);
    const code = await request(`${server.url}/api/settings/link-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-svc': '1', origin: server.url },
      body: '{}',
    });
    expect(code.status).toBe(200);
    const oldHandle = /^Link to (\S+) with/.exec(code.body.line)![1]!;
    // The person's handle changes (as Settings would change it) after the line was made.
    await poke(server, sql.unsafe`UPDATE participants SET handle = ${`@renamed-${store}`} WHERE id = ${person.id}`);
    const agent = await registerAgent(server, 'Linker', { unlinked: true });
    const linked = await rest(server, agent.key, 'link', { action: 'code', line: `Link to ${oldHandle.toUpperCase()} with ${code.body.code}` });
    expect(linked.body.data).toMatchObject({ status: 'linked', linked_to: { id: person.id, handle: `@renamed-${store}` } });
  });
  it('under Settings a person renames their handle and their agents’, places an agent’s under theirs, and revokes a key with its sub-agents', async () => {
    const person = await signIn(server, 'Handle Person', `handles-${store}@example.com`);
    const stranger = await signIn(server, 'Other Person', `other-handles-${store}@example.com`);
    const settings = (who: { cookie: string }, op: string, body: unknown) =>
      request(`${server.url}/api/settings/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: who.cookie, 'x-svc': '1', origin: server.url },
        body: JSON.stringify(body),
      });
    const made = await settings(person, 'create-agent', { name: 'Settings Agent' });
    const agentId = made.body.agent.id as string;

    const own = await settings(person, 'rename-handle', { handle: `@hp-${store}` });
    expect(own.body).toMatchObject({ participant_id: person.id, handle: `@hp-${store}`, status: 'changed' });
    const renamed = await settings(person, 'rename-handle', { agent_id: agentId, handle: '@Helper' });
    expect(renamed.body).toMatchObject({ participant_id: agentId, handle: '@Helper', previous_handle: made.body.agent.handle });
    const under = await settings(person, 'handle-under', { agent_id: agentId });
    expect(under.body).toMatchObject({ handle: `@Helper.hp-${store}`, previous_handle: '@Helper' });
    expect((await settings(stranger, 'handle-under', { agent_id: agentId })).status).toBe(404);
    expect((await settings(person, 'rename-handle', { handle: `@x.hp-${store}` })).status).toBe(400);

    // Revoking the agent's key from Settings ends it, and the sub-agent key it made, at once, live connections too.
    const key = made.body.agent_key as string;
    await seat(agentId);
    const sub = (await mint(key, { pad_ids: [padAlone] })).body.data.agent_key as string;
    const live = await openProvider(server, padAlone, sub);
    closers.push(() => live.close());
    await live.synced;
    let closed = 0;
    live.provider.on('close', () => closed++);
    const subCredential = await credentialOf(sub);
    expect(liveCredentials(server)).toContain(subCredential);
    expect((await settings(person, 'revoke', { credential_id: await credentialOf(key) })).status).toBe(200);
    // Closed by the revocation itself, not by the periodic re-check: gone from the server when it answers.
    expect(liveCredentials(server)).not.toContain(subCredential);
    for (const revoked of [key, sub]) expect((await rest(server, revoked, 'open_pad', { pad_id: padAlone })).status).toBe(401);
    await expect.poll(() => closed).toBeGreaterThan(0);
  });
  it('moderate names someone by an earlier handle, without case, as by the current one', async () => {
    const asker = await registerAgent(server, 'Asker');
    expect((await rest(server, asker.key, 'set_handle', { handle: '@asker-renamed' })).status).toBe(200);
    expect((await rest(server, asker.key, 'join_hub', { hub: hub.slug })).body.data.status).toBe('requested');
    const letIn = await rest(server, owner.key, 'moderate', { hub: hub.slug, action: 'let_in', who: asker.handle.toUpperCase() });
    expect(letIn.status).toBe(200);
    expect((await rest(server, asker.key, 'open_hub', { hub: hub.slug })).body.data.seat).toEqual({ role: 'member' });
  });
});
