import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Rule } from '../../server/core/limits/paceRules.ts';
import { countInline, PaceRefused } from '../../server/core/limits/paceWindows.ts';
import { pacePrune } from '../../server/core/rulebook/pacePrune.ts';
import { appTool, instancePair, poke, registerAgent, request, rest, signIn, startTestServer, stores, type Reply, type TestServer } from '../support/server.ts';

const Count = z.object({ n: z.number() });
const Full = z.object({ i: z.number(), free_at: z.number() });
const MINUTE = 60_000;

/**
 * Write pace (SPEC part 8): rolling windows per participant kept in the store, measured by the
 * server's clock (moved here through `core.pace.now`), at the numbers of the spec (SVC_PACE_SCALE=1).
 * Each test starts a day after the last, so no window of an earlier test is still open.
 */
describe.each(stores())('write pace on %s', (store) => {
  let server: TestServer;
  let now = Date.now();
  let owner: { key: string; id: string };
  let hub: { slug: string; hub_id: string };

  /** A person and agents linked to them, seated in the test hub. */
  const human = async (name: string) => {
    const person = await signIn(server, name, `${name.toLowerCase()}-${now}@example.com`);
    const agent = async (agentName: string) => {
      const reply = await request(`${server.url}/api/settings/create-agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: person.cookie, 'x-svc': '1', origin: server.url },
        body: JSON.stringify({ name: agentName }),
      });
      const made = { key: reply.body.agent_key as string, id: reply.body.agent.id as string };
      await seat(made.id);
      return made;
    };
    await seat(person.id);
    return { ...person, agent };
  };
  const seat = (id: string) =>
    poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${id}, 'member') ON CONFLICT DO NOTHING`);
  const thread = async (title: string) => (await rest(server, owner.key, 'start_thread', { hub: hub.slug, title, body: 'Start.' })).body.data.thread_id as string;
  const post = (key: string, threadId: string, body: string) => rest(server, key, 'post_reply', { thread_id: threadId, body });

  /** A refusal names its limit and when to come back, in the body and in Retry-After. */
  const expectRefused = (reply: Reply, limit: string, seconds: number) => {
    expect(reply.status).toBe(429);
    expect(reply.body).toMatchObject({ error: 'rate_limited', limit, retry_after_seconds: seconds });
    expect(reply.headers.get('retry-after')).toBe(String(seconds));
    expect(reply.body.message).toContain(`You can write again at ${new Date(now + seconds * 1000).toISOString()}`);
  };

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PACE_SCALE: '1', SVC_PUBLIC_THREADS: '1' });
    server.core.pace.now = () => now;
    owner = await registerAgent(server, 'Pace Owner');
    const made = await rest(server, owner.key, 'create_hub', { name: 'Pace Desk' });
    hub = made.body.data;
  });
  afterAll(() => server?.close());
  beforeEach(() => {
    now += 24 * 3_600_000;
  });

  it("one agent's posts in one thread: 20 a minute, then refused until the oldest leaves the window", async () => {
    const ada = await (await human('Ada')).agent('Ada Bot');
    const here = await thread('Twenty');
    for (let i = 0; i < 20; i++) {
      expect((await post(ada.key, here, `Post ${i}`)).status).toBe(200);
      now += 1_000;
    }
    // The first post was 20 s ago: it leaves the minute in 40 s. A refused call keeps its idempotency key unused.
    const keyed = { thread_id: here, body: 'One too many', idempotency_key: 'pace-refused-once' };
    expectRefused(await rest(server, ada.key, 'post_reply', keyed), 'agent_posts_in_thread', 40);
    expect((await post(ada.key, await thread('Elsewhere'), 'Another thread is another window')).status).toBe(200);
    now += 39_000;
    expectRefused(await post(ada.key, here, 'Still too early'), 'agent_posts_in_thread', 1);
    now += 1_000;
    const again = await rest(server, ada.key, 'post_reply', keyed);
    expect(again.status).toBe(200);
    expect(again.body.data.replayed).toBeUndefined();
    expectRefused(await post(ada.key, here, 'The twentieth in this minute again'), 'agent_posts_in_thread', 1);
  });

  it('writes per participant: 60 a minute across threads, a sub-agent counting with its parent', async () => {
    const bo = await (await human('Bo')).agent('Bo Bot');
    const threads = [await thread('W1'), await thread('W2'), await thread('W3'), await thread('W4')];
    const sub = (await rest(server, bo.key, 'mint_subagent', { thread_ids: threads })).body.data.agent_key as string;
    for (let i = 0; i < 60; i++) {
      const reply = await post(i % 2 ? sub : bo.key, threads[i % 4]!, `Write ${i}`);
      expect(reply.status).toBe(200);
    }
    expectRefused(await post(sub, threads[0]!, 'Sixty-first'), 'writes', 60);
    expectRefused(await post(bo.key, threads[1]!, 'Sixty-first again'), 'writes', 60);
    now += MINUTE;
    expect((await post(sub, threads[2]!, 'A minute on')).status).toBe(200);
  });

  it("pools a human's agents: 20 hubs a day among them, while another human's agent still makes one", async () => {
    const cy = await human('Cy');
    const [one, two] = [await cy.agent('Cy One'), await cy.agent('Cy Two')];
    for (let i = 0; i < 20; i++) {
      const made = await rest(server, i % 2 ? two.key : one.key, 'create_hub', { name: `Cy hub ${i}` });
      expect(made.status).toBe(200);
    }
    expectRefused(await rest(server, two.key, 'create_hub', { name: 'Cy hub 21' }), 'hubs_created', 86_400);
    expectRefused(await appTool(server, cy.cookie, 'create_hub', { name: 'By hand' }), 'hubs_created', 86_400);
    const dee = await (await human('Dee')).agent('Dee Bot');
    expect((await rest(server, dee.key, 'create_hub', { name: 'Dee hub' })).status).toBe(200);
    now += 86_400_000;
    expect((await rest(server, one.key, 'create_hub', { name: 'Cy hub, next day' })).status).toBe(200);
  });

  it('same text: once per 10 minutes in a thread for an agent, 5 threads an hour; a hash is kept, never the text', async () => {
    const eve = await (await human('Eve')).agent('Eve Bot');
    const text = 'This exact announcement goes out to every single thread I can find.';
    const threads = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => thread(`Same ${i}`)));
    expect((await post(eve.key, threads[0]!, text)).status).toBe(200);
    expectRefused(await post(eve.key, threads[0]!, `  ${text.toUpperCase()} `), 'same_text_in_thread', 600);
    expect((await post(eve.key, threads[0]!, 'Short texts repeat freely.')).status).toBe(200);
    expect((await post(eve.key, threads[0]!, 'Short texts repeat freely.')).status).toBe(200);
    for (const other of threads.slice(1, 5)) expect((await post(eve.key, other, text)).status).toBe(200);
    expectRefused(await post(eve.key, threads[5]!, text), 'same_text_across_threads', 3_600);
    const kept = await server.core.db.pool.oneFirst(sql.type(Count)`
      SELECT (SELECT count(*) FROM pace_marks WHERE key LIKE '%announcement%' OR place LIKE '%announcement%')
        + (SELECT count(*) FROM pace_rings WHERE key LIKE '%announcement%') AS n`);
    expect(kept).toBe(0);
    // Kept in a ring (a window of one post) or as rows, by the hash.
    const hashed = await server.core.db.pool.oneFirst(sql.type(Count)`
      SELECT (SELECT count(*) FROM pace_marks WHERE key LIKE 'st:%') + (SELECT count(*) FROM pace_rings WHERE key LIKE 'st:%') AS n`);
    expect(hashed).toBeGreaterThan(0);
    now += 10 * MINUTE;
    expect((await post(eve.key, threads[0]!, text)).status).toBe(200);
  });

  it('same text: three times in a thread for a person', async () => {
    const fay = await human('Fay');
    const here = await thread('People repeat');
    const text = 'Please read the pinned pad before asking about the schedule again.';
    for (let i = 0; i < 3; i++) expect((await appTool(server, fay.cookie, 'post_reply', { thread_id: here, body: text })).status).toBe(200);
    expectRefused(await appTool(server, fay.cookie, 'post_reply', { thread_id: here, body: text }), 'same_text_in_thread', 600);
  });

  it('hub joins and join requests: 10 an hour without a verified email', async () => {
    const gus = await (await human('Gus')).agent('Gus Bot');
    const slugs: string[] = [];
    for (let i = 0; i < 11; i++) slugs.push((await rest(server, owner.key, 'create_hub', { name: `Ask ${i}` })).body.data.slug);
    for (const slug of slugs.slice(0, 10)) expect((await rest(server, gus.key, 'join_hub', { hub: slug })).body.data.status).toBe('requested');
    expectRefused(await rest(server, gus.key, 'join_hub', { hub: slugs[10] }), 'hub_joins', 3_600);
  });

  it('reactions (here at a tenth): 300 an hour in one thread from everyone together', async () => {
    const here = await thread('Reacted to');
    const posts: string[] = [];
    for (let i = 0; i < 7; i++) posts.push((await post(owner.key, here, `React to ${i}`)).body.data.post_id);
    const elsewhere = await thread('Not reacted to yet');
    const other = (await post(owner.key, elsewhere, 'Fresh')).body.data.post_id;
    const [tia, uma] = [await human('Tia'), await human('Uma')];
    server.core.pace.scale = 0.1;
    try {
      const reactions = ['thumbs_up', 'heart', 'laugh', 'eyes', 'check'];
      for (let i = 0; i < 30; i++) {
        const reply = await appTool(server, tia.cookie, 'react', { post_id: posts[Math.floor(i / 5)], reaction: reactions[i % 5] });
        expect(reply.status).toBe(200);
      }
      expectRefused(await appTool(server, uma.cookie, 'react', { post_id: posts[6], reaction: 'heart' }), 'reactions_in_thread', 3_600);
      expect((await appTool(server, uma.cookie, 'react', { post_id: other, reaction: 'heart' })).status).toBe(200);
    } finally {
      server.core.pace.scale = 1;
    }
  });

  it('cooldown: 15 refusals in 10 minutes make an agent read-only for 15 minutes, its human told once; their own clicks still work', async () => {
    const hal = await human('Hal');
    const bot = await hal.agent('Hal Bot');
    const here = await thread('Cooling');
    for (let i = 0; i < 20; i++) await post(bot.key, here, `Fast ${i}`);
    for (let i = 1; i < 15; i++) expectRefused(await post(bot.key, here, `Refused ${i}`), 'agent_posts_in_thread', 60);
    const fifteenth = await post(bot.key, here, 'Refused 15');
    const until = new Date(now + 15 * MINUTE).toISOString();
    expectRefused(fifteenth, 'cooldown', 900);
    expect(fifteenth.body.cooldownUntil).toBe(until);
    // Read-only everywhere, for every counted write; reads still work.
    now += 2 * MINUTE;
    const elsewhere = await post(bot.key, await thread('Elsewhere'), 'Somewhere else');
    expectRefused(elsewhere, 'cooldown', 780);
    expect(elsewhere.body.cooldownUntil).toBe(until);
    expect((await rest(server, bot.key, 'open_thread', { thread_id: here })).status).toBe(200);
    expect((await appTool(server, hal.cookie, 'post_reply', { thread_id: here, body: 'I am still here.' })).status).toBe(200);
    const told = await server.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM inbox_items WHERE recipient_id = ${hal.id} AND kind = 'cooldown'`);
    expect(told).toBe(1);
    const inbox = await appTool(server, hal.cookie, 'check_inbox', {});
    expect(inbox.body.data.items.map((item: { kind: string }) => item.kind)).toContain('cooldown');
    // Settings lists the agent as cooling down, until when.
    const settings = await request(`${server.url}/api/settings/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: hal.cookie, 'x-svc': '1', origin: server.url },
      body: '{}',
    });
    expect(settings.body.cooling_agents).toEqual([{ id: bot.id, until }]);
    now += 13 * MINUTE;
    expect((await post(bot.key, here, 'Back after the cooldown')).status).toBe(200);
  });

  it('an agent-only run: after 30 posts among two agents, posts are spaced 30 s, then 60 s, until a person posts', async () => {
    const jo = await human('Jo');
    const [one, two] = [await jo.agent('Jo One'), await (await human('Kit')).agent('Kit Bot')];
    const here = await thread('Two agents talking');
    for (let i = 0; i < 30; i++) expect((await post(i % 2 ? two.key : one.key, here, `Turn ${i}`)).status).toBe(200);
    expectRefused(await post(one.key, here, 'Turn 30'), 'agent_only_run', 30);
    now += 30_000;
    expect((await post(one.key, here, 'Turn 30, spaced')).status).toBe(200);
    expectRefused(await post(two.key, here, 'Turn 31'), 'agent_only_run', 60);
    now += 60_000;
    expect((await post(two.key, here, 'Turn 31, spaced')).status).toBe(200);
    expectRefused(await post(one.key, here, 'Turn 32'), 'agent_only_run', 120);
    expect((await appTool(server, jo.cookie, 'post_reply', { thread_id: here, body: 'A person joins in.' })).status).toBe(200);
    expect((await post(one.key, here, 'Turn 32, after the person')).status).toBe(200);
    expect((await post(two.key, here, 'Turn 33, at once')).status).toBe(200);
  });

  it("agents' edits to one pad are counted together (here at a tenth of the spec's 60 a minute); a person's are not", async () => {
    server.core.pace.scale = 0.1;
    try {
      const lu = await human('Lu');
      const [one, two] = [await lu.agent('Lu One'), await (await human('Mo')).agent('Mo Bot')];
      const made = (await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: 'Shared pad', text: 'First.' })).body.data;
      const edit = (key: string, i: number) => rest(server, key, 'edit_pad', { pad_id: made.pad_id, base_version: made.version, inserts: [{ after: 'start', text: `Line ${i}.` }] });
      for (let i = 0; i < 6; i++) expect((await edit(i % 2 ? two.key : one.key, i)).status).toBe(200);
      expectRefused(await edit(two.key, 6), 'agent_edits_to_pad', 60);
      const byHand = await appTool(server, lu.cookie, 'edit_pad', { pad_id: made.pad_id, base_version: made.version, inserts: [{ after: 'start', text: 'By hand.' }] });
      expect(byHand.status).toBe(200);
      now += MINUTE;
      expect((await edit(one.key, 7)).status).toBe(200);
    } finally {
      server.core.pace.scale = 1;
    }
  });

  it('pad text saved (here at a thousandth of the 3,000,000 characters a day): counted in characters, refused until the day frees enough, another participant unaffected', async () => {
    now -= now % MINUTE;
    const start = now;
    server.core.pace.scale = 0.001;
    try {
      const writer = await (await human('Penny')).agent('Penny Pen');
      // A hub of its own: at a thousandth, the pool of its human's agents where others take part is 1 an hour.
      const own = (await rest(server, writer.key, 'create_hub', { name: 'Penny Pages' })).body.data;
      const made = await rest(server, writer.key, 'create_pad', { hub: own.slug, title: 'Long text', text: 'a'.repeat(1_000) });
      expect(made.status, made.text).toBe(200);
      let version = made.body.data.version as number;
      const [block] = (await rest(server, writer.key, 'open_pad', { pad_id: made.body.data.pad_id, mode: 'full' })).body.data.blocks as string[];
      const edit = (key: string, chars: number) =>
        rest(server, key, 'edit_pad', { pad_id: made.body.data.pad_id, base_version: version, edits: [{ block_id: block, text: 'b'.repeat(chars) }] });
      now += MINUTE + 1_000;
      const second = await edit(writer.key, 1_500);
      expect(second.status, second.text).toBe(200);
      version = second.body.data.version;
      now += MINUTE + 1_000;
      // 2,500 saved: 600 more would pass 3,000 until the first minute's 1,000 leave the day.
      expectRefused(await edit(writer.key, 600), 'pad_text_saved', (start + 24 * 3_600_000 - now) / 1000);
      const other = await (await human('Quill')).agent('Quill Bot');
      await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${own.hub_id}, ${other.id}, 'member')`);
      expect((await edit(other.key, 600)).status).toBe(200);
      version += 1;
      now += MINUTE + 1_000;
      const fits = await edit(writer.key, 400);
      expect(fits.status, fits.text).toBe(200);
      version = fits.body.data.version;
      now = start + 24 * 3_600_000 + 1_000;
      expect((await edit(writer.key, 600)).status).toBe(200);
    } finally {
      server.core.pace.scale = 1;
    }
  });

  it('pad text saved by an edit of the whole text counts the paragraphs that changed, not the text sent', async () => {
    now -= now % MINUTE;
    const start = now;
    server.core.pace.scale = 0.001;
    try {
      const writer = await (await human('Rhea')).agent('Rhea Rewrite');
      const own = (await rest(server, writer.key, 'create_hub', { name: 'Rhea Rewrites' })).body.data;
      const [first, second] = ['a'.repeat(1_000), 'c'.repeat(1_000)];
      const made = await rest(server, writer.key, 'create_pad', { hub: own.slug, title: 'Two paragraphs', text: `${first}\n\n${second}` });
      expect(made.status, made.text).toBe(200);
      const whole = (version: number, text: string) => rest(server, writer.key, 'edit_pad', { pad_id: made.body.data.pad_id, base_version: version, text });
      now += MINUTE + 1_000;
      // 1,902 characters sent, 900 saved: 2,000 + 900 is within the 3,000.
      const rewritten = await whole(made.body.data.version, `${first}\n\n${'d'.repeat(900)}`);
      expect(rewritten.status, rewritten.text).toBe(200);
      now += MINUTE + 1_000;
      // 2,900 saved: 200 more passes 3,000 until the first minute's 2,000 leave the day.
      expectRefused(await whole(rewritten.body.data.version, `${first}\n\n${'e'.repeat(200)}`), 'pad_text_saved', (start + 24 * 3_600_000 - now) / 1000);
    } finally {
      server.core.pace.scale = 1;
    }
  });

  it("an agent's reads: past the read pace (here a hundredth of the spec's 600 a minute) it is told to wait_for_changes", async () => {
    server.core.pace.scale = 0.01;
    try {
      const nell = await (await human('Nell')).agent('Nell Bot');
      const here = await thread('Read often');
      for (let i = 0; i < 6; i++) expect((await rest(server, nell.key, 'open_thread', { thread_id: here })).status).toBe(200);
      const refused = await rest(server, nell.key, 'open_thread', { thread_id: here });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: 'rate_limited', retry_after_seconds: 60 });
      expect(refused.body.message).toContain('wait_for_changes');
      now += MINUTE;
      expect((await rest(server, nell.key, 'open_thread', { thread_id: here })).status).toBe(200);
    } finally {
      server.core.pace.scale = 1;
    }
  });

  it("a linked agent's pool (at a hundredth, then a thousandth): 500 an hour among its human's agents, 2,000 once the human is verified, 4 times that with reach", async () => {
    const ora = await human('Ora');
    const [one, two] = [await ora.agent('Ora One'), await ora.agent('Ora Two')];
    const [here, fresh, third] = [await thread('Shared with others'), await thread('Another shared one'), await thread('A third')];
    now += MINUTE;
    server.core.pace.scale = 0.01;
    try {
      // At a hundredth a participant writes once a minute: the minutes pass between posts.
      // Ora answers each post, so no agent-only run builds up (its thresholds are scaled too).
      for (let i = 0; i < 5; i++) {
        expect((await post(i % 2 ? two.key : one.key, here, `Pooled ${i}`)).status).toBe(200);
        expect((await appTool(server, ora.cookie, 'post_reply', { thread_id: here, body: `Noted ${i}` })).status).toBe(200);
        now += MINUTE;
      }
      expectRefused(await post(two.key, here, 'Pooled 5'), 'linked_agents_pool', 3_600 - 5 * 60);
      // Verified, the pool is the address's (every ID verified with it), 2,000 an hour.
      await poke(server, sql.unsafe`UPDATE participants SET email_verified_at = now() WHERE id = ${ora.id}`);
      expect((await post(two.key, here, 'Verified now')).status).toBe(200);
      now += MINUTE;
      server.core.pace.scale = 0.001;
      expect((await post(one.key, fresh, 'Second of two')).status).toBe(200);
      now += MINUTE;
      expectRefused(await post(two.key, fresh, 'Past the verified pool'), 'linked_agents_pool', 3_600 - 2 * 60);
      await poke(server, sql.unsafe`UPDATE participants SET created_at = now() - interval '2 days' WHERE id = ${ora.id}`);
      expect((await post(two.key, third, 'Reads verified now: 8 at a thousandth')).status).toBe(200);
    } finally {
      server.core.pace.scale = 1;
    }
  });

  it('guests in a public thread (here at a tenth): 60 posts an hour without an email; with one no daily count and 240 an hour shared by every ID of that address', async () => {
    const square = (await rest(server, owner.key, 'create_hub', { name: 'Open square' })).body.data;
    await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public' WHERE id = ${square.hub_id}`);
    const open = (await rest(server, owner.key, 'start_thread', { hub: square.slug, title: 'Guests welcome', body: 'Hello.' })).body.data.thread_id;
    await poke(server, sql.unsafe`UPDATE threads SET accepts_guests = true WHERE id = ${open}`);
    const guest = async (name: string, address?: string) => {
      const reply = await request(`${server.url}/api/jump-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ thread: open, name }) });
      if (address) await poke(server, sql.unsafe`UPDATE participants SET email_key = ${address}, email_verified_at = now() WHERE id = ${reply.body.participant.id}`);
      return reply.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
    };
    const say = (cookie: string, body: string) => appTool(server, cookie, 'post_reply', { thread_id: open, body });
    const vic = await guest('Vic');
    // Four guests of one address, none with 10 posts (which would make it read verified, with pools 4 times larger).
    const address = `shared-${now}@example.test`;
    const guests = [await guest('Pat', address), await guest('Quin', address), await guest('Rae', address), await guest('Sol', address)];
    server.core.pace.scale = 0.1;
    try {
      for (let i = 0; i < 6; i++) expect((await say(vic, `Vic ${i}`)).body.data.allowance).toMatchObject({ used: i + 1, limit: 20 });
      expectRefused(await say(vic, 'Vic again'), 'guest_posts', 3_600);
      for (let i = 0; i < 24; i++) {
        const reply = await say(guests[i % 4]!, `Guest post ${i}`);
        expect(reply.status).toBe(200);
        expect(reply.body.data.allowance).toBeUndefined();
        if (i % 12 === 11) now += MINUTE;
      }
      expectRefused(await say(guests[3]!, 'Twenty-fifth'), 'guest_posts', 3_600 - 2 * 60);
    } finally {
      server.core.pace.scale = 1;
    }
  });

  it('the prune rule drops pace rows no window reads any more, once', async () => {
    const wes = await (await human('Wes')).agent('Wes Bot');
    expect((await post(wes.key, await thread('Pruned'), 'Counted now')).status).toBe(200);
    const marks = (before: number) => server.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM pace_marks WHERE at <= ${before}`);
    expect(await marks(now)).toBeGreaterThan(0);
    const prune = (at: number) => server.core.db.write((tx) => pacePrune.apply(tx, new Date(at)));
    // Earlier tests' rows, a day and more before, go first; this one's stay while their windows may read them.
    await prune(now + 3_600_000);
    expect(await prune(now + 3_600_000)).toEqual({ ids: [], rows: 0 });
    const left = await marks(now);
    expect(left).toBeGreaterThan(0);
    // Every row that went is counted, not the tables they went from.
    expect((await prune(now + 24 * 3_600_000)).rows).toBeGreaterThanOrEqual(left);
    expect(await marks(now)).toBe(0);
    expect(await prune(now + 24 * 3_600_000)).toEqual({ ids: [], rows: 0 });
  });

  it('running out of a shared pool does not count toward the cooldown', async () => {
    const ivy = await human('Ivy');
    const bot = await ivy.agent('Ivy Bot');
    for (let i = 0; i < 20; i++) await rest(server, bot.key, 'create_hub', { name: `Ivy hub ${i}` });
    for (let i = 0; i < 16; i++) expectRefused(await rest(server, bot.key, 'create_hub', { name: `Ivy more ${i}` }), 'hubs_created', 86_400);
    expect((await post(bot.key, await thread('Ivy writes'), 'Still writing')).status).toBe(200);
  });

  it('a write counted inside its statement is refused with the windows pace_windows finds full, in rule order, and changes nothing', async () => {
    const key = (name: string) => `test:${now}:${name}`;
    const rules: Rule[] = [
      { name: 'ring', key: key('ring'), max: 2, windowMs: MINUTE, says: 'a ring', shared: false },
      { name: 'marks', key: key('marks'), max: 130, windowMs: MINUTE, says: 'marks', shared: false },
      { name: 'amount', key: key('amount'), max: 100, windowMs: MINUTE, says: 'an amount', shared: false, weight: 50, bucketMs: 1000 },
    ];
    const count = (at: number) => {
      const counted = countInline(rules, at);
      return poke(server, sql.unsafe`SELECT ${counted.sql} AS n`).then(() => null, (error: unknown) => counted.refused(error) ?? error);
    };
    const held = async () =>
      JSON.stringify([
        await poke(server, sql.unsafe`SELECT key, marks FROM pace_rings WHERE key LIKE ${key('%')} ORDER BY key`).then((r) => r.rows),
        await poke(server, sql.unsafe`SELECT key, at, weight FROM pace_marks WHERE key LIKE ${key('%')} ORDER BY key, at`).then((r) => r.rows),
      ]);
    expect(await count(now)).toBeNull();
    expect(await count(now + 1500)).toBeNull();
    const before = await held();
    const at = now + 3000;
    const full = await poke(
      server,
      sql.unsafe`SELECT i, free_at FROM pace_windows('{}', ${sql.array(rules.map((rule) => rule.key), 'text')}, ${sql.array(rules.map((rule) => rule.max), 'int8')},
        ${sql.array(rules.map((rule) => rule.windowMs), 'int8')}, ${sql.array([null, null, null], 'text')}, ${sql.array(rules.map((rule) => rule.weight ?? 1), 'int8')},
        ${sql.array(rules.map((rule) => rule.bucketMs ?? 0), 'int8')}, ${at}::int8, false, false)`,
    ).then((r) => z.array(Full).parse(r.rows).map((row) => ({ key: rules[row.i - 1]!.key, freeAt: row.free_at })));
    // The ring holds its two marks and the amount its 100 (in the second of its first write): both full.
    expect(full).toEqual([
      { key: key('ring'), freeAt: now + MINUTE },
      { key: key('amount'), freeAt: now - (now % 1000) + MINUTE },
    ]);
    const refused = await count(at);
    expect(refused).toBeInstanceOf(PaceRefused);
    expect((refused as PaceRefused).full).toEqual(full);
    expect(await held()).toBe(before);
  });
});

/** Exactly N of 2N: the windows hold across two server processes on one database. */
const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
describe.skipIf(!databaseUrl || !redisUrl)('write pace across two instances', { tags: ['heavy'] }, () => {
  const closers: (() => void | Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it("admits exactly 20 of 40 posts racing into one thread through both instances", async () => {
    const [a, b] = await instancePair(redisUrl!, closers);
    for (const instance of [a, b]) instance.core.pace.scale = 1;
    const owner = await registerAgent(a, 'Pair Owner');
    const hub = (await rest(a, owner.key, 'create_hub', { name: 'Pair Pace' })).body.data;
    const threadId = (await rest(a, owner.key, 'start_thread', { hub: hub.slug, title: 'Race', body: 'Go.' })).body.data.thread_id;
    const racer = await registerAgent(b, 'Pair Racer');
    await poke(a, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${racer.id}, 'member')`);
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => rest(i % 2 ? a : b, racer.key, 'post_reply', { thread_id: threadId, body: `Race ${i}` })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(20);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(20);
    // Past 15 refusals the racer is in its cooldown, and the rest say so.
    for (const reply of refused) expect(['agent_posts_in_thread', 'cooldown']).toContain(reply.body.limit);
    const posts = await a.core.db.pool.oneFirst(sql.type(Count)`SELECT count(*) AS n FROM posts WHERE author_id = ${racer.id}`);
    expect(posts).toBe(20);
  });
});
