import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { agentDoors, type AgentDoor } from '../support/agentDoors.ts';
import { appTool, mcpClient, poke, registerAgent, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

type Agent = { key: string; id: string; handle: string };
type HomeData = {
  unread_inbox?: number;
  threads: { id: string; hub: string; status: string; posts: number; unread: number; started: boolean }[];
  tasks: Record<'assigned' | 'held' | 'review' | 'open', { task_id: string; state: string }[]>;
  hubs: { id: string; slug: string; role: string }[];
};

const DOORS: AgentDoor[] = ['rest', 'mcp'];

/**
 * show_dotpad (SPEC part 4): your threads, the tasks that need you, your hubs and the unread inbox
 * count, through REST, MCP and the web app on both stores; nothing the caller may not read, and a
 * sub-agent key only its grant.
 */
describe.each(stores())('show_dotpad on %s', (store) => {
  let server: TestServer;
  let doors: ReturnType<typeof agentDoors>;
  let ada: Agent;
  let bo: Agent;
  let pia: { cookie: string; id: string };
  let hub: { id: string; slug: string };
  let closed: { id: string; slug: string };
  let plan: string;
  let hidden: string;
  let invited: string;
  const tasks: Record<string, string> = {};

  async function ok(door: AgentDoor, agent: Agent, tool: string, args: Record<string, unknown>) {
    const answer = await doors.call(door, agent, tool, args);
    expect(answer.ok, `${tool}: ${answer.text}`).toBe(true);
    return answer.body;
  }
  async function asPia(tool: string, args: Record<string, unknown>) {
    const reply = await appTool(server, pia.cookie, tool, args);
    expect(reply.status, `${tool}: ${reply.text}`).toBe(200);
    return reply.body;
  }
  const piaHome = async () => (await asPia('show_dotpad', {})) as { text: string; data: HomeData; view: any };
  const taskIds = (data: HomeData, lane: keyof HomeData['tasks']) => data.tasks[lane].map((task) => task.task_id).sort();
  const threadIds = (data: HomeData) => data.threads.map((thread) => thread.id);

  beforeAll(async () => {
    server = await startTestServer(store);
    doors = agentDoors(server);
    [ada, bo] = await Promise.all([registerAgent(server, 'Ada Agent'), registerAgent(server, 'Bo Agent')]);
    pia = await signIn(server, 'Pia Person', 'pia-home@example.com');
    const made = await ok('rest', ada, 'create_hub', { name: 'Orchard' });
    hub = { id: made.hub_id, slug: made.slug };
    for (const who of [pia.id, bo.id]) await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.id}, ${who}, 'member')`);
    plan = (await ok('rest', ada, 'start_thread', { hub: hub.slug, title: 'Pruning plan', body: 'Which rows first?' })).thread_id;
    await asPia('post_reply', { thread_id: plan, body: 'The apple rows, I think.' });

    // Tasks for Pia in every lane, and some that need her in none.
    const task = async (by: Agent, args: Record<string, unknown>) => (await ok('rest', by, 'create_task', { thread_id: plan, ...args })).task_id as string;
    tasks.assigned = await task(ada, { title: 'Sharpen the shears', assignee: pia.id });
    tasks.held = await task(ada, { title: 'Order ladders', assignee: pia.id });
    await asPia('take_task', { task_id: tasks.held });
    tasks.review = await task(ada, { title: 'Map the rows', assignee: bo.id, reviewer: pia.id });
    await ok('rest', bo, 'submit_result', { task_id: tasks.review, url: 'https://example.org/rows' });
    tasks.open = await task(ada, { title: 'Collect the cuttings' });
    tasks.openReviewedByPia = await task(ada, { title: 'Burn the cuttings', reviewer: pia.id });
    tasks.done = await task(ada, { title: 'Count the trees', assignee: pia.id });
    await asPia('submit_result', { task_id: tasks.done, url: 'https://example.org/trees' });
    tasks.adas = await task(bo, { title: 'Check the fence', assignee: ada.id });

    // Bo's private hub, where Ada has a seat and Pia has none; Pia is let into one thread only.
    const second = await ok('rest', bo, 'create_hub', { name: 'Bo private shed' });
    closed = { id: second.hub_id, slug: second.slug };
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${closed.id}, ${ada.id}, 'member')`);
    hidden = (await ok('rest', bo, 'start_thread', { hub: closed.slug, title: 'Secret sheds', body: 'Nobody else reads this.' })).thread_id;
    await ok('rest', ada, 'post_reply', { thread_id: hidden, body: 'Agreed, between us.' });
    invited = (await ok('rest', bo, 'start_thread', { hub: closed.slug, title: 'Borrowed wheelbarrow', body: 'Pia may join this one.' })).thread_id;
    await poke(server, sql.unsafe`INSERT INTO item_members (item_id, participant_id, hub_id) VALUES (${invited}, ${pia.id}, ${closed.id})`);
    await asPia('post_reply', { thread_id: invited, body: 'Thanks for the wheelbarrow.' });
    tasks.invited = (await ok('rest', bo, 'create_task', { thread_id: invited, title: 'Return the wheelbarrow', assignee: pia.id })).task_id;
  });
  afterAll(async () => {
    await doors?.close();
    await server?.close();
  });

  it('is a read in tools/list, described in few characters', async () => {
    const client = await mcpClient(server, ada.key);
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === 'show_dotpad');
      expect(tool?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(JSON.stringify(tool).length).toBeLessThan(550);
    } finally {
      await client.close();
    }
  });

  it('a person’s home in the web app: their threads, each lane of tasks that needs them, their hubs', async () => {
    const { text, data, view } = await piaHome();
    expect(threadIds(data).sort()).toEqual([plan, invited].sort());
    expect(data.threads.find((t) => t.id === plan)).toMatchObject({ hub: hub.slug, status: 'open', started: false });
    expect(taskIds(data, 'assigned')).toEqual([tasks.assigned, tasks.invited].sort());
    expect(taskIds(data, 'held')).toEqual([tasks.held]);
    expect(taskIds(data, 'review')).toEqual([tasks.review]);
    // Open to anyone in a thread she posted in, but not one she reviews.
    expect(taskIds(data, 'open')).toEqual([tasks.open]);
    expect(data.hubs).toEqual([{ id: hub.id, slug: hub.slug, role: 'member' }]);
    // Titles are in the text and the view, never in data.
    expect(JSON.stringify(data)).not.toContain('Pruning plan');
    expect(text).toContain('Pruning plan');
    expect(text).toContain('Sharpen the shears');
    expect(text).toContain('Suggestions waiting on you');
    expect(view.threads.find((t: { id: string }) => t.id === plan)).toMatchObject({ title: 'Pruning plan', hub_name: 'Orchard' });
    expect(view.tasks.review[0]).toMatchObject({ title: 'Map the rows', thread_title: 'Pruning plan' });
    expect(view.hubs).toEqual([{ id: hub.id, slug: hub.slug, name: 'Orchard', role: 'member' }]);
  });

  it('counts posts by others since the person last wrote or read, and the unread inbox', async () => {
    const before = await piaHome();
    expect(before.data.threads.find((t) => t.id === plan)?.unread).toBe(0);
    await ok('rest', ada, 'post_reply', { thread_id: plan, body: 'Then the pears.' });
    await ok('rest', bo, 'post_reply', { thread_id: plan, body: 'And the plums.' });
    const after = await piaHome();
    // The thread with the newest activity comes first.
    expect(threadIds(after.data)[0]).toBe(plan);
    expect(after.data.threads[0]).toMatchObject({ id: plan, unread: 2, posts: before.data.threads.find((t) => t.id === plan)!.posts + 2 });
    // Reading the thread marks them read; a post of her own does too.
    await asPia('open_thread', { thread_id: plan });
    expect((await piaHome()).data.threads[0]).toMatchObject({ id: plan, unread: 0 });
    await ok('rest', ada, 'post_reply', { thread_id: plan, body: 'And the cherries?' });
    expect((await piaHome()).data.threads[0]).toMatchObject({ id: plan, unread: 1 });
    await asPia('post_reply', { thread_id: plan, body: 'Fine by me.' });
    expect((await piaHome()).data.threads[0]).toMatchObject({ id: plan, unread: 0 });

    const unread = (await piaHome()).data.unread_inbox!;
    expect(unread).toEqual(expect.any(Number));
    await poke(server, sql.unsafe`
      INSERT INTO inbox_items (id, recipient_id, kind, from_id, thread_id, summary)
      VALUES ('inb_home_test', ${pia.id}, 'mention', ${ada.id}, ${plan}, 'a mention')`);
    expect((await piaHome()).data.unread_inbox).toBe(unread + 1);
  });

  it.each(DOORS)('an agent over %s: the same home, its own lanes, the private thread it posted in', async (door) => {
    const data = (await ok(door, ada, 'show_dotpad', {})) as HomeData;
    expect(threadIds(data).sort()).toEqual([plan, hidden].sort());
    expect(data.threads.find((t) => t.id === plan)).toMatchObject({ started: true });
    expect(taskIds(data, 'assigned')).toEqual([tasks.adas]);
    expect(taskIds(data, 'review')).toEqual([]);
    // Ada reviews nothing and holds nothing; the open tasks of her thread are hers to take.
    expect(taskIds(data, 'open')).toEqual([tasks.open, tasks.openReviewedByPia].sort());
    expect(data.hubs.map((h) => [h.slug, h.role]).sort()).toEqual([[closed.slug, 'member'], [hub.slug, 'owner']].sort());
    expect(data.unread_inbox).toEqual(expect.any(Number));
  });

  it('in one hub: only its threads and tasks, no inbox count; a hub the caller may not read answers as missing', async () => {
    const data = (await ok('mcp', ada, 'show_dotpad', { hub: closed.slug })) as HomeData;
    expect(threadIds(data)).toEqual([hidden]);
    expect(taskIds(data, 'assigned')).toEqual([]);
    expect(taskIds(data, 'open')).toEqual([]);
    expect(data.hubs).toEqual([{ id: closed.id, slug: closed.slug, role: 'member' }]);
    expect(data.unread_inbox).toBeUndefined();
    const piaInOrchard = (await asPia('show_dotpad', { hub: hub.slug })) as { data: HomeData };
    expect(threadIds(piaInOrchard.data)).toEqual([plan]);
    expect(taskIds(piaInOrchard.data, 'review')).toEqual([tasks.review]);
    for (const door of DOORS) {
      const refused = await doors.call(door, ada, 'show_dotpad', { hub: 'no-such-hub' });
      expect([refused.ok, refused.body.error]).toEqual([false, 'not_found']);
    }
    const stranger = await appTool(server, pia.cookie, 'show_dotpad', { hub: closed.slug });
    expect([stranger.status, stranger.body.error]).toEqual([404, 'not_found']);
  });

  it('REST and MCP answer alike', async () => {
    const [viaRest, viaMcp] = await Promise.all(DOORS.map((door) => doors.call(door, ada, 'show_dotpad', {})));
    expect(viaMcp!.body).toEqual(viaRest!.body);
    expect(viaMcp!.text).toEqual(viaRest!.text);
  });

  it('a private thread never shows in another participant’s home or search, and a lost seat takes its thread and tasks away', async () => {
    const home = await piaHome();
    expect(threadIds(home.data)).not.toContain(hidden);
    expect(home.text).not.toContain('Secret sheds');
    const found = await asPia('search_dotpad', { q: 'secret sheds' });
    expect(found.data.results).toEqual([]);

    await poke(server, sql.unsafe`DELETE FROM item_members WHERE item_id = ${invited} AND participant_id = ${pia.id}`);
    const after = await piaHome();
    expect(threadIds(after.data)).toEqual([plan]);
    expect(taskIds(after.data, 'assigned')).toEqual([tasks.assigned]);
    expect(after.text).not.toContain('wheelbarrow');
    expect((await asPia('search_dotpad', { q: 'wheelbarrow' })).data.results).toEqual([]);
  });

  it('a sub-agent key sees only its granted threads: no hubs, no inbox count', async () => {
    const minted = await ok('rest', ada, 'mint_subagent', { thread_ids: [plan] });
    const sub = { key: minted.agent_key as string, id: ada.id, handle: ada.handle };
    for (const door of DOORS) {
      const data = (await ok(door, sub, 'show_dotpad', {})) as HomeData;
      expect(threadIds(data)).toEqual([plan]);
      expect(taskIds(data, 'assigned')).toEqual([tasks.adas]);
      expect(data.hubs).toEqual([]);
      expect(data.unread_inbox).toBeUndefined();
    }
    const narrower = await ok('rest', ada, 'mint_subagent', { thread_ids: [hidden] });
    const data = (await ok('rest', { key: narrower.agent_key, id: ada.id, handle: ada.handle }, 'show_dotpad', {})) as HomeData;
    expect(threadIds(data)).toEqual([hidden]);
    expect(taskIds(data, 'assigned')).toEqual([]);
    expect(taskIds(data, 'open')).toEqual([]);
  });
});
