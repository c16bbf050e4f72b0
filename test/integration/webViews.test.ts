import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { toolContracts, type ToolData, type ToolInput, type ToolName, type ToolView } from '../../schema/tools/contract.ts';
import { appTool, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

type Person = { cookie: string; id: string };

/**
 * The web app's door answers what schema/tools/contract.ts declares, which is what the client is typed
 * from: every call here checks its `view` (and its `data`, where declared) against the tool's schemas,
 * to the last field. And the rights the pages show their controls by (`can`) come from the server.
 */
describe.each(stores())('the web views follow their contract on %s', (store) => {
  let server: TestServer;
  let olga: Person;
  let hal: Person;
  let mia: Person;
  let sam: Person;
  let hub: string;

  /** Parsing strips what a schema does not declare, so an answer equal to its parse holds nothing else. */
  function conforms(schema: z.ZodType | undefined, value: unknown, what: string) {
    if (!schema) return expect(value, what).toBeNull();
    const parsed = schema.safeParse(value);
    expect(parsed.error?.issues, what).toBeUndefined();
    expect(parsed.data, `${what}: fields the contract does not declare`).toEqual(value);
  }

  async function call<N extends ToolName>(who: Person, name: N, args: ToolInput<N>): Promise<{ data: ToolData<N>; view: ToolView<N> }> {
    const reply = await appTool(server, who.cookie, name, args);
    expect(reply.status, `${name}: ${reply.text}`).toBe(200);
    const contract: { input: z.ZodType; data?: z.ZodType; view?: z.ZodType } = toolContracts[name];
    conforms(contract.view, reply.body.view, `${name} view`);
    if (contract.data) conforms(contract.data, reply.body.data, `${name} data`);
    return reply.body;
  }

  beforeAll(async () => {
    server = await startTestServer(store);
    [olga, hal, mia, sam] = await Promise.all([
      signIn(server, 'Olga Owner', 'olga-views@example.com'),
      signIn(server, 'Hal Helper', 'hal-views@example.com'),
      signIn(server, 'Mia Member', 'mia-views@example.com'),
      signIn(server, 'Sam Stranger', 'sam-views@example.com'),
    ]);
    hub = (await call(olga, 'create_hub', { name: 'Views' })).data.slug;
    for (const who of [hal, mia]) {
      expect((await call(who, 'join_hub', { hub, note: 'Let me in?' })).data.status).toBe('requested');
      await call(olga, 'moderate', { hub, action: 'let_in', who: who.id });
    }
    await call(olga, 'moderate', { hub, action: 'name_helper', who: hal.id });
    await call(sam, 'join_hub', { hub, note: 'Me too?' });
  });

  afterAll(() => server?.close());

  it('open_hub: the owner may do everything to members and helpers, and nothing to herself', async () => {
    const { view } = await call(olga, 'open_hub', { hub });
    expect(view.can).toEqual({ moderate: true, guide: true, audience: true, take_over: false });
    expect(view.requests?.map((r) => r.id)).toEqual([sam.id]);
    const can = Object.fromEntries((view.members ?? []).map((m) => [m.id, m.can]));
    expect(can).toEqual({
      [olga.id]: { remove: false, name_helper: false, name_member: false },
      [hal.id]: { remove: true, name_helper: false, name_member: true },
      [mia.id]: { remove: true, name_helper: true, name_member: false },
    });
  });

  it('open_hub: a helper lets people in and removes members, but names no roles and removes no helper', async () => {
    const { view } = await call(hal, 'open_hub', { hub });
    expect(view.can).toEqual({ moderate: true, guide: true, audience: false, take_over: false });
    expect(view.requests?.map((r) => r.id)).toEqual([sam.id]);
    const can = Object.fromEntries((view.members ?? []).map((m) => [m.id, m.can]));
    expect(can).toEqual({
      [olga.id]: { remove: false, name_helper: false, name_member: false },
      [hal.id]: { remove: false, name_helper: false, name_member: false },
      [mia.id]: { remove: true, name_helper: false, name_member: false },
    });
    // What the view offers is what `moderate` does.
    const refused = await appTool(server, hal.cookie, 'moderate', { hub, action: 'name_helper', who: mia.id });
    expect(refused.status).toBe(403);
  });

  it('open_hub: a member sees the members and may do nothing to them; a stranger reads no people', async () => {
    const { view } = await call(mia, 'open_hub', { hub });
    expect(view.can).toEqual({ moderate: false, guide: false, audience: false, take_over: false });
    expect(view.requests).toBeNull();
    expect(view.members?.every((m) => !m.can.remove && !m.can.name_helper && !m.can.name_member)).toBe(true);
    const stranger = await appTool(server, sam.cookie, 'open_hub', { hub });
    expect(stranger.status).toBe(404);
  });

  it('open_thread: whoever started a thread marks its answer and renames it; the owner and helpers moderate', async () => {
    const { data } = await call(mia, 'start_thread', { hub, title: 'Which shelf?', body: 'Where do the atlases go?' });
    const reply = await call(hal, 'post_reply', { thread_id: data.thread_id, body: 'The bottom one.' });
    await call(olga, 'react', { post_id: reply.data.post_id, reaction: 'heart' });
    expect((await call(mia, 'open_thread', { thread_id: data.thread_id })).view.can).toEqual({ moderate: false, mark_answer: true, rename: true, lock: true });
    expect((await call(hal, 'open_thread', { thread_id: data.thread_id })).view.can).toEqual({ moderate: true, mark_answer: true, rename: true, lock: true });
    const other = await call(hal, 'start_thread', { hub, title: 'Opening hours', body: 'Nine to five?' });
    expect((await call(mia, 'open_thread', { thread_id: other.data.thread_id })).view.can).toEqual({ moderate: false, mark_answer: false, rename: false, lock: false });
    await call(mia, 'catch_up', { thread_id: data.thread_id });
    await call(mia, 'mark_answer', { post_id: reply.data.post_id });
  });

  it('pads, tasks, home, inbox, DMs and search answer their declared views', async () => {
    const thread = (await call(olga, 'start_thread', { hub, title: 'Catalogue', body: 'Hi @mia-member, a list?' })).data.thread_id;
    const pad = (await call(olga, 'create_pad', { thread_id: thread, title: 'Catalogue', text: '# Atlases\n\nBottom shelf.\n\n# Maps\n\nDrawer two.' })).data;
    const outline = (await call(mia, 'open_pad', { pad_id: pad.pad_id })).view;
    expect(outline.mode === 'outline' && outline.sections.map((s) => s.title)).toEqual(['Atlases', 'Maps']);
    expect((await call(mia, 'open_pad', { pad_id: pad.pad_id, mode: 'changes', since: pad.version })).view).toMatchObject({ mode: 'changes', changes: [] });
    await call(mia, 'open_pad', { pad_id: pad.pad_id, mode: 'full' });
    await call(mia, 'ui_pad_history', { pad_id: pad.pad_id });
    expect((await call(mia, 'ui_pad_version', { pad_id: pad.pad_id, version: pad.version })).view.blocks).toHaveLength(4);
    await call(olga, 'ui_restore_pad_version', { pad_id: pad.pad_id, version: pad.version });

    const task = (await call(olga, 'create_task', { thread_id: thread, title: 'Count the atlases', assignee: mia.id })).data.task_id;
    await call(mia, 'take_task', { task_id: task });
    await call(mia, 'update_task', { task_id: task, action: 'start' });
    await call(mia, 'submit_result', { task_id: task, pad_id: pad.pad_id });
    await call(mia, 'list_tasks', { in: thread });
    await call(mia, 'show_dotpad', {});
    await call(mia, 'ui_my_hubs', {});
    await call(mia, 'check_inbox', {});
    await call(mia, 'wait_for_changes', { thread_id: thread, version: '0', timeout_seconds: 1 });

    const dm = (await call(mia, 'start_dm', { with: hal.id, body: 'Coffee later?' })).data.dm_id;
    await call(hal, 'post_reply', { thread_id: dm, body: 'Yes.' });
    await call(mia, 'list_dms', {});
    await call(mia, 'list_dms', { dm_id: dm });
    await call(hal, 'respond_to_dm', { dm_id: dm, action: 'accept' });

    const found = (await call(mia, 'search_dotpad', { q: 'atlases' })).view;
    expect(found.groups.length).toBeGreaterThan(0);
    await call(olga, 'set_hub_guide', { hub, text: 'Quiet, please.' });
  });
});
