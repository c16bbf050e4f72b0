import { sql } from 'slonik';
import type { Ref } from './arbitraryFromSchema.ts';
import type { Kind } from './fuzzHints.ts';
import { registerAgent, rest, signIn, startTestServer, type Reply, type Store, type TestServer, poke } from './server.ts';

/** Who calls: agents by key (REST and MCP), a signed-in person (the web app's door), and nobody. */
export type Caller = 'owner' | 'member' | 'outsider' | 'person' | 'nokey';

/** One server and the world seeded in it; every world of a run is seeded by the same calls in the same order. */
export type World = {
  server: TestServer;
  keys: Record<'owner' | 'member' | 'outsider', string>;
  cookie: string;
  ids: Record<Kind, string[]>;
  idOf(ref: Ref): string;
};

function ok(reply: Reply, step: string): Record<string, any> {
  if (reply.status !== 200) throw new Error(`seeding the fuzz world: ${step} answered ${reply.status} ${reply.text}`);
  return reply.body.data;
}

/**
 * A hub with its owner, a member and a signed-in person in it; a thread with three posts; a pad
 * with four blocks and two edits (the owner's and the member's); a pad beside the thread. An
 * outsider has a hub, a thread and a pad of its own, so there are real ids the others may not read.
 */
export async function seedWorld(store: Store): Promise<World> {
  const server = await startTestServer(store);
  try {
    const owner = await registerAgent(server, 'Fuzz Owner');
    const member = await registerAgent(server, 'Fuzz Member');
    const outsider = await registerAgent(server, 'Fuzz Outsider');
    const person = await signIn(server, 'Fuzz Person', 'fuzz.person@example.org');
    const call = async (key: string, tool: string, args: Record<string, unknown>) => ok(await rest(server, key, tool, args), tool);

    const hub = await call(owner.key, 'create_hub', { name: 'Fuzz Hub' });
    for (const participant of [member.id, person.id]) {
      await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${participant}, 'member')`);
    }
    const theirs = await call(outsider.key, 'create_hub', { name: 'Elsewhere' });

    const thread = await call(owner.key, 'start_thread', { hub: hub.slug, title: 'Fuzz thread', body: 'The opening post.' });
    const second = await call(member.key, 'post_reply', { thread_id: thread.thread_id, body: 'A reply.' });
    const third = await call(owner.key, 'post_reply', { thread_id: thread.thread_id, body: 'A nested reply.', reply_to: second.post_id });
    const otherThread = await call(outsider.key, 'start_thread', { hub: theirs.slug, title: 'Not yours', body: 'Private.' });

    const pad = await call(owner.key, 'create_pad', { hub: hub.slug, title: 'Plan', text: '# Plan\n\nFirst step.\n\nSecond step.\n\nThird step.' });
    const blocks: string[] = (await call(owner.key, 'open_pad', { pad_id: pad.pad_id, mode: 'full' })).blocks;
    const ownerEdit = await call(owner.key, 'edit_pad', { pad_id: pad.pad_id, base_version: pad.version, edits: [{ block_id: blocks[1], text: 'First step, revised.' }] });
    const memberEdit = await call(member.key, 'edit_pad', { pad_id: pad.pad_id, base_version: ownerEdit.version, inserts: [{ after: blocks[2], text: 'A member note.' }] });
    const beside = await call(member.key, 'create_pad', { thread_id: thread.thread_id, title: 'Beside the thread' });
    const otherPad = await call(outsider.key, 'create_pad', { hub: theirs.slug, title: 'Theirs', text: 'Not for you.' });

    const ids: Record<Kind, string[]> = {
      hub: [hub.slug, hub.hub_id, theirs.slug, theirs.hub_id],
      thread: [thread.thread_id, otherThread.thread_id],
      post: [thread.post_id, second.post_id, third.post_id, otherThread.post_id],
      pad: [pad.pad_id, beside.pad_id, otherPad.pad_id],
      edit: [ownerEdit.edit_id, memberEdit.edit_id],
      block: blocks,
    };
    return {
      server,
      keys: { owner: owner.key, member: member.key, outsider: outsider.key },
      cookie: person.cookie,
      ids,
      idOf: (ref) => ids[ref.kind as Kind][ref.index]!,
    };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** How many things of each kind a world holds: the same in every world of a run. */
export const countsOf = (world: World) => Object.fromEntries(Object.entries(world.ids).map(([kind, list]) => [kind, list.length])) as Record<Kind, number>;
