import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { modelTools } from '../../api/tools/registry.ts';
import { jsonSchemaOf, toolDataSchema } from '../../api/tools/dataSchema.ts';
import { appTool, mcpClient, registerAgent, request, rest, signIn, startTestServer, stores, type TestServer } from '../support/server.ts';

/** Ids and times differ between two writes, and the caller's kind between doors; everything else must be the same. */
const normalise = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(value)
      .replace(/\b(agt|hum)_[0-9a-f]{20}\b/g, 'participant_<id>')
      .replace(/\b(svca|svcc|svci)_[A-Za-z0-9_-]{43}/g, '$1_<secret>')
      .replace(/\b(hub|thr|msg|pad|edt|inv|tsk|dm|dec|rep|inb)_[0-9a-f]{20}\b/g, '$1_<id>')
      .replace(/\b[0-9a-f]{8}\b/g, '<block>')
      .replace(/"(author_kind|kind)":"(human|agent)"/g, '"$1":"<kind>"')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
      .replace(/\b(world|parity)(-\d+)?\b/g, '$1-<n>'),
  );

type Fixture = { hub: string; thread: string; post: string; pad: string; block: string; edit: string; asker: string; task: string; item: string };
type Case = { tool: string; args: (f: Fixture) => Record<string, unknown>; error?: string };

/** At least one success and one refusal per model tool. */
const cases: Case[] = [
  { tool: 'create_hub', args: () => ({ name: 'Parity' }) },
  { tool: 'create_hub', args: () => ({ name: '' }), error: 'invalid' },
  { tool: 'open_hub', args: (f) => ({ hub: f.hub }) },
  { tool: 'open_hub', args: () => ({ hub: 'missing-hub' }), error: 'not_found' },
  { tool: 'join_hub', args: (f) => ({ hub: f.hub }) },
  { tool: 'join_hub', args: () => ({ hub: '' }), error: 'invalid' },
  { tool: 'moderate', args: (f) => ({ hub: f.hub, action: 'let_in', who: f.asker }) },
  { tool: 'moderate', args: (f) => ({ hub: f.hub, action: 'hide', who: f.asker }), error: 'invalid' },
  { tool: 'set_hub_guide', args: (f) => ({ hub: f.hub, text: 'Start here.' }) },
  { tool: 'set_hub_guide', args: () => ({ hub: 'missing-hub', text: 'x' }), error: 'not_found' },
  { tool: 'set_hub_visibility', args: (f) => ({ hub: f.hub, audience: 'private' }) },
  { tool: 'set_hub_visibility', args: (f) => ({ hub: f.hub, audience: 'public' }), error: 'forbidden' },
  { tool: 'set_hub_mode', args: (f) => ({ hub: f.hub, mode: 'open' }) },
  { tool: 'set_hub_mode', args: () => ({ hub: 'missing-hub', mode: 'checked' }), error: 'not_found' },
  { tool: 'invite', args: (f) => ({ to: f.hub, uses: 2 }) },
  { tool: 'invite', args: (f) => ({ to: f.hub, uses: 0 }), error: 'invalid' },
  { tool: 'start_thread', args: (f) => ({ hub: f.hub, title: 'T', body: 'B' }) },
  { tool: 'start_thread', args: (f) => ({ hub: f.hub, title: 'T' }), error: 'invalid' },
  { tool: 'post_reply', args: (f) => ({ thread_id: f.thread, body: 'reply' }) },
  { tool: 'post_reply', args: (f) => ({ thread: f.thread, body: 'reply' }), error: 'invalid' },
  { tool: 'open_thread', args: (f) => ({ thread_id: f.thread }) },
  { tool: 'open_thread', args: () => ({ thread_id: 'thr_missing' }), error: 'not_found' },
  { tool: 'mark_answer', args: (f) => ({ post_id: f.post }) },
  { tool: 'mark_answer', args: () => ({ post_id: 'msg_missing' }), error: 'not_found' },
  { tool: 'react', args: (f) => ({ post_id: f.post, reaction: 'eyes' }) },
  { tool: 'react', args: (f) => ({ post_id: f.post, reaction: 'nope' }), error: 'invalid' },
  { tool: 'catch_up', args: (f) => ({ thread_id: f.thread }) },
  { tool: 'catch_up', args: () => ({ thread_id: 'thr_missing' }), error: 'not_found' },
  { tool: 'report', args: (f) => ({ post_id: f.post, reason: 'Checking.' }) },
  { tool: 'report', args: () => ({ post_id: 'msg_missing' }), error: 'not_found' },
  { tool: 'start_dm', args: (f) => ({ with: f.asker, body: 'A word in private.' }) },
  { tool: 'start_dm', args: () => ({ with: '@nobody-goes-by-this', body: 'Hi' }), error: 'not_found' },
  { tool: 'list_dms', args: () => ({}) },
  { tool: 'list_dms', args: () => ({ dm_id: 'dm_missing' }), error: 'not_found' },
  { tool: 'respond_to_dm', args: (f) => ({ dm_id: f.asker, action: 'accept' }) },
  { tool: 'respond_to_dm', args: () => ({ dm_id: 'dm_missing', action: 'block' }), error: 'not_found' },
  { tool: 'create_task', args: (f) => ({ thread_id: f.thread, title: 'Write it up' }) },
  { tool: 'create_task', args: (f) => ({ thread_id: f.thread }), error: 'invalid' },
  { tool: 'take_task', args: (f) => ({ task_id: f.task }) },
  { tool: 'take_task', args: () => ({ task_id: 'tsk_missing' }), error: 'not_found' },
  { tool: 'submit_result', args: (f) => ({ task_id: f.task, pad_id: f.pad }) },
  { tool: 'submit_result', args: (f) => ({ task_id: f.task }), error: 'invalid' },
  { tool: 'update_task', args: (f) => ({ task_id: f.task, action: 'cancel' }) },
  { tool: 'update_task', args: (f) => ({ task_id: f.task, action: 'finish' }), error: 'invalid' },
  { tool: 'list_tasks', args: (f) => ({ in: f.thread }) },
  { tool: 'list_tasks', args: () => ({ limit: 0 }), error: 'invalid' },
  { tool: 'create_pad', args: (f) => ({ hub: f.hub, title: 'Notes', text: '# Plan\n\nFirst step.' }) },
  { tool: 'create_pad', args: (f) => ({ hub: f.hub, thread_id: f.thread, title: 'Both' }), error: 'invalid' },
  { tool: 'open_pad', args: (f) => ({ pad_id: f.pad }) },
  { tool: 'open_pad', args: () => ({ pad_id: 'pad_missing' }), error: 'not_found' },
  { tool: 'edit_pad', args: (f) => ({ pad_id: f.pad, base_version: 2, edits: [{ block_id: f.block, text: 'Changed.' }] }) },
  { tool: 'edit_pad', args: (f) => ({ pad_id: f.pad, base_version: 99, text: 'x' }), error: 'invalid' },
  { tool: 'undo_edit', args: (f) => ({ edit_id: f.edit }) },
  { tool: 'undo_edit', args: () => ({ edit_id: 'edt_missing' }), error: 'not_found' },
  // In an Open hub verify only says that one's own done counts.
  { tool: 'verify', args: (f) => ({ id: f.edit, verdict: 'verify', note: 'Read it.' }) },
  { tool: 'verify', args: () => ({ id: 'xyz_missing', verdict: 'verify', note: 'Read it.' }), error: 'not_found' },
  { tool: 'wait_for_changes', args: (f) => ({ pad_id: f.pad, version: 1, timeout_seconds: 1 }) },
  { tool: 'wait_for_changes', args: (f) => ({ pad_id: f.pad, thread_id: f.thread, version: 1 }), error: 'invalid' },
  { tool: 'show_dotpad', args: (f) => ({ hub: f.hub }) },
  { tool: 'show_dotpad', args: () => ({ hub: 'missing-hub' }), error: 'not_found' },
  { tool: 'search_dotpad', args: () => ({ q: 'plan type:pad' }) },
  { tool: 'search_dotpad', args: () => ({ q: 'plan type:planet' }), error: 'invalid' },
  // Each caller's inbox was read and acked before: nothing new, and its item is done.
  { tool: 'check_inbox', args: () => ({}) },
  { tool: 'check_inbox', args: () => ({ cursor: 'not-ours' }), error: 'invalid' },
  { tool: 'claim_inbox_item', args: (f) => ({ item_id: f.item, holder: 'copy-1' }) },
  { tool: 'claim_inbox_item', args: () => ({ item_id: 'inb_missing' }), error: 'not_found' },
  // The agent-key-only tools: the web app's door answers "Unknown tool." (their refusal there).
  // The bot's own handle (added under Settings, it is under its person's), so both doors leave it as it is.
  { tool: 'set_handle', args: () => ({ handle: '@parity-bot.parity-bot-s-person' }) },
  { tool: 'set_handle', args: () => ({ handle: '@not a handle' }), error: 'invalid' },
  { tool: 'mint_subagent', args: (f) => ({ thread_ids: [f.thread], hours: 2 }) },
  { tool: 'mint_subagent', args: () => ({ thread_ids: ['thr_missing'] }), error: 'not_found' },
  { tool: 'link', args: () => ({ action: 'new' }) },
  { tool: 'link', args: () => ({ action: 'code' }), error: 'invalid' },
  // Last: the key it renews has an hour left, which every later reply would say.
  { tool: 'rotate_key', args: () => ({}) },
];

/** Checks a value against a JSON Schema as /openapi.json publishes it (with the validator the MCP SDK ships). */
const validator = new AjvJsonSchemaValidator();

const keyOnly = new Set(modelTools.filter((tool) => tool.agentKeyOnly).map((tool) => tool.name));
const UNKNOWN = { error: 'not_found', message: 'Unknown tool.' };

describe.each(stores())('REST, MCP and the web app agree on %s', (store) => {
  let server: TestServer;
  let key: string;
  let asker: { key: string; id: string };
  let client: Client;
  let cookie: string;
  /** The item each caller's inbox got from the asker's DM, acked. */
  const items = { agent: '', web: '' };
  /** /openapi.json, whose response schemas declare each tool's structured content. */
  let openapi: any;

  /**
   * Each way in gets its own, identical world, so writes compare like with like; the web app's is
   * made by a person through the web app's own door.
   */
  async function fixture(door: 'agent' | 'web' = 'agent'): Promise<Fixture> {
    const call = (tool: string, args: unknown) => (door === 'web' ? appTool(server, cookie, tool, args) : rest(server, key, tool, args));
    const hub = await call('create_hub', { name: 'World' });
    const thread = await call('start_thread', { hub: hub.body.data.slug, title: 'Topic', body: 'Opening post' });
    const pad = await call('create_pad', { hub: hub.body.data.slug, title: 'Pad', text: 'One.\n\nTwo.' });
    const padId = pad.body.data.pad_id;
    const full = await call('open_pad', { pad_id: padId, mode: 'full' });
    const block = full.body.data.blocks[0];
    const edit = await call('edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: full.body.data.blocks[1], text: 'Two, edited.' }] });
    const task = await call('create_task', { thread_id: thread.body.data.thread_id, title: 'Do it' });
    await rest(server, asker.key, 'join_hub', { hub: hub.body.data.slug });
    // The join request reaches the owner's inbox: acked here, so each door's check_inbox reads the same inbox.
    const inbox = await call('check_inbox', {});
    await call('check_inbox', { ack_up_to: inbox.body.data.newest_cursor });
    return { hub: hub.body.data.slug, thread: thread.body.data.thread_id, post: thread.body.data.post_id, pad: padId, block, edit: edit.body.data.edit_id, asker: asker.id, task: task.body.data.task_id, item: items[door] };
  }

  beforeAll(async () => {
    server = await startTestServer(store);
    const bot = await registerAgent(server, 'Parity Bot');
    key = bot.key;
    asker = await registerAgent(server, 'Parity Asker');
    client = await mcpClient(server, key);
    openapi = (await request(`${server.url}/openapi.json`)).body;
    const person = await signIn(server, 'Parity Person', 'parity@example.com');
    cookie = person.cookie;
    // The asker shares a hub with the agent and the person, so start_dm opens a DM with it at once.
    const shared = await rest(server, asker.key, 'create_hub', { name: 'Shared' });
    const invite = await rest(server, asker.key, 'invite', { to: shared.body.data.slug, uses: 2 });
    const token = (invite.body.data.url as string).split('#')[1]!;
    expect((await rest(server, key, 'join_hub', { invite: token })).status).toBe(200);
    expect((await appTool(server, cookie, 'join_hub', { invite: token })).status).toBe(200);
    // Each caller's inbox holds one item (the asker's DM), read and acked.
    for (const [door, id, check] of [
      ['agent', bot.id, (args: unknown) => rest(server, key, 'check_inbox', args)],
      ['web', person.id, (args: unknown) => appTool(server, cookie, 'check_inbox', args)],
    ] as const) {
      expect((await rest(server, asker.key, 'start_dm', { with: id, body: 'A word.' })).status).toBe(200);
      const inbox = (await check({})).body.data;
      items[door] = inbox.items[0].id;
      expect((await check({ ack_up_to: inbox.next_cursor })).body.data.unread).toBe(0);
    }
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('covers every model tool with a success and an error', () => {
    for (const tool of modelTools) {
      expect(cases.some((c) => c.tool === tool.name && !c.error), `${tool.name} success`).toBe(true);
      expect(keyOnly.has(tool.name) || cases.some((c) => c.tool === tool.name && c.error), `${tool.name} error`).toBe(true);
    }
  });

  it.each(cases)('$tool $error', async ({ tool, args, error }) => {
    const viaRest = await rest(server, key, tool, args(await fixture()));
    const viaMcp = await client.callTool({ name: tool, arguments: args(await fixture()) });
    const viaWeb = await appTool(server, cookie, tool, args(await fixture('web')));
    if (keyOnly.has(tool)) expect([viaWeb.status, viaWeb.body]).toEqual([404, UNKNOWN]);
    if (error) {
      expect(viaRest.body.error).toBe(error);
      if (!keyOnly.has(tool)) expect(viaWeb.body).toEqual(viaRest.body);
      expect(viaMcp.isError).toBe(true);
      expect((viaMcp.structuredContent as { error: string }).error).toBe(error);
      expect(normalise(viaMcp.structuredContent)).toEqual(normalise(viaRest.body));
    } else {
      expect(viaRest.status).toBe(200);
      expect(viaMcp.isError).toBeFalsy();
      expect(normalise(viaMcp.structuredContent)).toEqual(normalise(viaRest.body.data));
      const mcpText = (viaMcp.content as { text: string }[])[0]!.text;
      expect(normalise(mcpText)).toEqual(normalise(viaRest.body.text));
      // The data (MCP's structuredContent, equal to it above) is what /openapi.json declares, to the last
      // field; /openapi.json leaves out verify (SPEC part 4), whose data is its tools/list output schema.
      const declared = tool === 'verify' ? jsonSchemaOf(toolDataSchema(modelTools.find((t) => t.name === tool)!)) : openapi.paths[`/api/v1/tools/${tool}`].post.responses['200'].content['application/json'].schema.allOf[1].properties.data;
      const checked = validator.getValidator(declared)(viaRest.body.data);
      expect(checked.valid, `${tool} data as /openapi.json declares it: ${checked.errorMessage}`).toBe(true);
      if (keyOnly.has(tool)) return;
      expect(viaWeb.status).toBe(200);
      // The agent's replies say whom it is linked to; the person's have no such line.
      const { linked_to: linkedTo, ...agentData } = viaRest.body.data;
      expect(linkedTo).toMatchObject({ id: expect.stringMatching(/^hum_/) });
      expect(normalise(viaWeb.body.data)).toEqual(normalise(agentData));
    }
  });
});
