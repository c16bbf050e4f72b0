// @module-tag heavy
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { authenticateBearer } from '../../server/core/identity/credentials.ts';
import { revokeCredentials } from '../../server/core/identity/keys.ts';
import { instancePair, liveCredentials, openProvider, poke, registerAgent, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

/**
 * Revocation (SPEC part 5 "Bearer check"): at once on the instance that revoked, within 5 seconds on
 * every other, open live connections included, which are closed. The 5 seconds are not timed here,
 * where a loaded machine could miss them: the other instances are shown to hear it on the change feed,
 * and their fallbacks (cached lookups and the live connections' re-check) run 4 s each.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const databaseUrl = process.env.TEST_DATABASE_URL;
if (process.env.CI === 'true' && (!redisUrl || !databaseUrl)) {
  throw new Error('CI=true needs TEST_REDIS_URL and TEST_DATABASE_URL: the several-instances suite may not be skipped.');
}

const closers: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** An agent with a pad of its own, a sub-agent key for it, and both keys used once on `reader` (so it holds their lookups). */
async function keyedPad(maker: TestServer, reader: TestServer) {
  const agent = await registerAgent(maker, 'Revocable');
  const hub = await rest(maker, agent.key, 'create_hub', { name: 'Revocation' });
  const pad = await rest(maker, agent.key, 'create_pad', { hub: hub.body.data.slug, title: 'Live', text: 'Live text.' });
  const padId = pad.body.data.pad_id as string;
  const sub = (await rest(maker, agent.key, 'mint_subagent', { pad_ids: [padId] })).body.data.agent_key as string;
  for (const key of [agent.key, sub]) expect((await rest(reader, key, 'open_pad', { pad_id: padId })).status).toBe(200);
  const live = async (key: string) => {
    const provider = await openProvider(reader, padId, key);
    closers.push(() => provider.close());
    await provider.synced;
    let closed = 0;
    provider.provider.on('close', () => closed++);
    return { closed: () => closed };
  };
  const credentialOf = async (key: string) => (await authenticateBearer(maker.core, key)).credentialId;
  return { agent, padId, sub, credentialId: await credentialOf(agent.key), subCredentialId: await credentialOf(sub), live };
}

describe.each(stores())('revocation on one instance on %s', (store) => {
  it('a revoked key is refused at once, though just used, and its live connections and its sub-agents’ are closed', async () => {
    const server = await startTestServer(store);
    closers.push(() => server.close());
    const { agent, padId, sub, credentialId, subCredentialId, live } = await keyedPad(server, server);
    const own = await live(agent.key);
    const child = await live(sub);
    expect(liveCredentials(server)).toEqual(expect.arrayContaining([credentialId, subCredentialId]));

    expect(await revokeCredentials(server.core, [credentialId])).toEqual([credentialId]);
    // Closed by the revocation itself, not by the periodic re-check: gone from the server when it returns.
    expect(liveCredentials(server)).not.toContain(credentialId);
    expect(liveCredentials(server)).not.toContain(subCredentialId);
    for (const key of [agent.key, sub]) {
      const reply = await rest(server, key, 'open_pad', { pad_id: padId });
      expect([reply.status, reply.body.error]).toEqual([401, 'unauthenticated']);
    }
    await expect.poll(() => [own.closed() > 0, child.closed() > 0]).toEqual([true, true]);
  });
});

describe.skipIf(!redisUrl || !databaseUrl)('revocation across instances', () => {
  const pair = () => instancePair(redisUrl!, closers);

  it('a key revoked through instance A is refused on B, which hears it on the change feed and closes its live connections', async () => {
    const [a, b] = await pair();
    const { agent, padId, sub, credentialId, live } = await keyedPad(a, b);
    const own = await live(agent.key);
    const child = await live(sub);
    // What B hears on the change feed.
    const heard: string[] = [];
    b.core.db.watchChanges({ changed: () => {}, hearing: () => {}, credentialEnded: (id) => heard.push(id) });

    await revokeCredentials(a.core, [credentialId]);
    await expect.poll(async () => (await rest(b, agent.key, 'open_pad', { pad_id: padId })).status).toBe(401);
    await expect.poll(() => [own.closed() > 0, child.closed() > 0]).toEqual([true, true]);
    expect((await rest(b, sub, 'open_pad', { pad_id: padId })).status).toBe(401);
    // B was told by the feed, not left to its lookups running out.
    expect(heard).toContain(credentialId);
  });

  it('a renewal is heard by every instance and closes nothing; a key revoked straight in the database, told by nobody, is refused everywhere all the same', async () => {
    const [a, b] = await pair();
    const { agent, padId, credentialId, live } = await keyedPad(a, b);
    const heard: string[] = [];
    b.core.db.watchChanges({ changed: () => {}, hearing: () => {}, credentialEnded: (id) => heard.push(id) });

    // A renewal through A cuts the old key short: B hears it, and the old key goes on working there.
    const own = await live(agent.key);
    const renewed = await rest(a, agent.key, 'rotate_key', {});
    expect(renewed.status).toBe(200);
    await expect.poll(() => heard).toContain(credentialId);
    const stillGood = await rest(b, agent.key, 'open_pad', { pad_id: padId });
    expect(stillGood.status).toBe(200);
    expect(own.closed()).toBe(0);

    // As another service would: straight in the database, past both instances, so no instance tells
    // the others (nor would one that stopped between its commit and its announcement): B's 4 s
    // lookups and its live connections' 4 s re-check refuse the key and close its connection.
    const fresh = renewed.body.data.agent_key as string;
    const onB = await live(fresh);
    await poke(a, sql.unsafe`UPDATE credentials SET revoked_at = now() WHERE id = ${(await authenticateBearer(a.core, fresh)).credentialId}`);
    await expect.poll(async () => (await rest(b, fresh, 'open_pad', { pad_id: padId })).status).toBe(401);
    await expect.poll(() => onB.closed()).toBeGreaterThan(0);
  });

  it('a member removed, or a key revoked, through A reads nothing more of a hub B kept in memory, within 5 s', async () => {
    const [a, b] = await pair();
    const owner = await registerAgent(a, 'Owner');
    const hub = (await rest(a, owner.key, 'create_hub', { name: 'Kept reads' })).body.data;
    const [leaving, revoked] = [await registerAgent(a, 'Leaving'), await registerAgent(a, 'Revoked')];
    for (const member of [leaving, revoked]) await poke(a, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${member.id}, 'member')`);
    const openHub = (key: string) => rest(b, key, 'open_hub', { hub: hub.slug });
    // B hears A's changes, so it keeps what it reads; both members read the hub there twice.
    await expect.poll(() => b.core.reads.keeping).toBe(true);
    for (const member of [leaving, revoked, leaving, revoked]) expect((await openHub(member.key)).status).toBe(200);

    const removed = await rest(a, owner.key, 'moderate', { hub: hub.slug, action: 'remove', who: leaving.id });
    expect(removed.body.data.changed).toBe(true);
    await revokeCredentials(a.core, [(await authenticateBearer(a.core, revoked.key)).credentialId]);
    // Heard on the change feed within milliseconds; the 5 s of SPEC part 5 are the bound.
    await expect.poll(async () => [(await openHub(leaving.key)).body.error, (await openHub(revoked.key)).status], { timeout: 5_000 }).toEqual(['not_found', 401]);
    // Nor does the hub's page elsewhere name the removed member among those seated.
    const seen = await rest(b, owner.key, 'open_hub', { hub: hub.slug });
    expect(seen.body.data.members.map((m: { id: string }) => m.id)).not.toContain(leaving.id);
  });
});
